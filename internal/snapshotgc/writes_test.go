package snapshotgc

import (
	"context"
	"testing"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/confighash/confighash/hasher"
	"github.com/confighash/confighash/internal/pinning"
)

var testKey = []byte("0123456789abcdef0123456789abcdef")

// made is a snapshot as the pinner makes it, stored in a fake cluster, and
// what the informer would hold of it.
func made(t *testing.T) (*Controller, *corev1.ConfigMap, snapshot) {
	t.Helper()
	src := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "n", Name: "app"}, Data: map[string]string{"k": "v"}}
	cm := pinningSnapshot(src)
	cm.UID = "snap-uid"
	c := &Controller{cfg: Config{Client: fake.NewClientBuilder().WithObjects(cm).Build(), Key: testKey}, log: logr.Discard()}
	if err := c.cfg.Client.Get(context.Background(), client.ObjectKeyFromObject(cm), cm); err != nil {
		t.Fatal(err)
	}
	return c, cm, snapshot{Source: hasher.Source{Kind: hasher.ConfigMap, Name: cm.Name}, UID: cm.UID, ResourceVersion: cm.ResourceVersion}
}

func TestDeleteUnreadDeletesAVerifiedSnapshot(t *testing.T) {
	c, cm, s := made(t)
	if err := c.apply(context.Background(), "n", action{snapshot: s, delete: true}); err != nil {
		t.Fatal(err)
	}
	if err := c.cfg.Client.Get(context.Background(), client.ObjectKeyFromObject(cm), cm); !apierrors.IsNotFound(err) {
		t.Fatalf("snapshot still there: %v", err)
	}
}

// TestDeleteUnreadKeepsALookAlike: an object labelled as a snapshot whose
// content does not give its name is not confighash's to delete.
func TestDeleteUnreadKeepsALookAlike(t *testing.T) {
	ctx := context.Background()
	look := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "n", Name: "app-pin-0123456789abcdef0123",
		Labels: map[string]string{"confighash.dev/snapshot": "true"}, Annotations: map[string]string{"confighash.dev/snapshot-of": "configmap/app"}},
		Data: map[string]string{"k": "other"}, Immutable: new(true)}
	look.UID = "look-uid"
	c := &Controller{cfg: Config{Client: fake.NewClientBuilder().WithObjects(look).Build(), Key: testKey}, log: logr.Discard()}
	if err := c.cfg.Client.Get(ctx, client.ObjectKeyFromObject(look), look); err != nil {
		t.Fatal(err)
	}
	s := snapshot{Source: hasher.Source{Kind: hasher.ConfigMap, Name: look.Name}, UID: look.UID, ResourceVersion: look.ResourceVersion}
	if err := c.apply(ctx, "n", action{snapshot: s, delete: true}); err != nil {
		t.Fatal(err)
	}
	if err := c.cfg.Client.Get(ctx, client.ObjectKeyFromObject(look), look); err != nil {
		t.Fatalf("look-alike deleted: %v", err)
	}
}

// TestDeleteUnreadHoldsForTheVersionPlanned: a snapshot that changed since
// the plan read it (the pinner made a revision its owner) is not deleted.
func TestDeleteUnreadHoldsForTheVersionPlanned(t *testing.T) {
	ctx := context.Background()
	c, cm, s := made(t)
	cm.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web-1", UID: "rs"}}
	if err := c.cfg.Client.Update(ctx, cm); err != nil {
		t.Fatal(err)
	}
	if err := c.apply(ctx, "n", action{snapshot: s, delete: true}); err == nil {
		t.Fatal("deleted a snapshot changed since the plan")
	}
	if err := c.cfg.Client.Get(ctx, client.ObjectKeyFromObject(cm), cm); err != nil {
		t.Fatalf("snapshot deleted: %v", err)
	}
}

func TestAddOwners(t *testing.T) {
	ctx := context.Background()
	c, cm, s := made(t)
	pods := []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: "a", UID: "pa"}, {APIVersion: "v1", Kind: "Pod", Name: "b", UID: "pb"}}
	if err := c.apply(ctx, "n", action{snapshot: s, owners: pods}); err != nil {
		t.Fatal(err)
	}
	if err := c.cfg.Client.Get(ctx, client.ObjectKeyFromObject(cm), cm); err != nil {
		t.Fatal(err)
	}
	if len(cm.OwnerReferences) != 2 || cm.OwnerReferences[1].UID != "pb" {
		t.Fatalf("owners %v", cm.OwnerReferences)
	}
	// The plan's version is gone: a second patch from it does not apply.
	if err := c.apply(ctx, "n", action{snapshot: s, owners: pods[:1]}); err == nil {
		t.Fatal("a patch of a stale version applied")
	}
	s.ResourceVersion, s.Owners = cm.ResourceVersion, cm.OwnerReferences
	c3 := []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: "c", UID: "pc"}}
	if err := c.apply(ctx, "n", action{snapshot: s, owners: c3}); err != nil {
		t.Fatal(err)
	}
	if err := c.cfg.Client.Get(ctx, client.ObjectKeyFromObject(cm), cm); err != nil {
		t.Fatal(err)
	}
	if len(cm.OwnerReferences) != 3 {
		t.Fatalf("owners %v", cm.OwnerReferences)
	}
}

// pinningSnapshot is the snapshot of all of src's keys under testKey.
func pinningSnapshot(src *corev1.ConfigMap) *corev1.ConfigMap {
	return pinning.ConfigMapSnapshot(testKey, src, hasher.Reference{Source: hasher.Source{Kind: hasher.ConfigMap, Name: src.Name}, AllKeys: true})
}
