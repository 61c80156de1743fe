package app

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	metadatafake "k8s.io/client-go/metadata/fake"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/confighash/confighash/hasher"
	"github.com/confighash/confighash/internal/contract"
	"github.com/confighash/confighash/internal/pinning"
	"github.com/confighash/confighash/internal/snapshotgc"
	"github.com/confighash/confighash/internal/workload"
)

// TestPermissionsCoverTheSnapshotController runs the snapshot lifetime
// controller (--pinning) against a recording client: a snapshot an
// orphaned pod reads is given the pod as owner, one nothing reads is
// deleted. Every request it sends, its informers' included, is in the
// table, and every snapshotgc entry was sent.
func TestPermissionsCoverTheSnapshotController(t *testing.T) {
	o := DefaultOptions()
	o.Pinning = true
	ps := Permissions(o, workload.Kinds())
	key := []byte("0123456789abcdef0123456789abcdef")
	snap := func(v string, uid string) *corev1.ConfigMap {
		src := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "n", Name: "app"}, Data: map[string]string{"k": v}}
		cm := pinning.ConfigMapSnapshot(key, src, hasher.Reference{Source: hasher.Source{Kind: hasher.ConfigMap, Name: "app"}, AllKeys: true})
		cm.UID = types.UID(uid)
		return cm
	}
	read, unread := snap("v2", "read"), snap("v1", "unread")
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "n", Name: "web-1", UID: "pod"}, Spec: corev1.PodSpec{Containers: []corev1.Container{{
		Name: "app", EnvFrom: []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: read.Name}}}},
	}}}}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "n", Labels: map[string]string{
		contract.InjectionLabel: contract.InjectionEnabled, pinning.NamespaceLabel: pinning.NamespaceEnabled,
	}}}
	rec := &recorder{}
	c, base := rec.client(t, read, unread, pod, ns)
	scheme := runtime.NewScheme()
	if err := metav1.AddMetaToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	var meta []runtime.Object
	for _, cm := range []*corev1.ConfigMap{read, unread} {
		if err := base.Get(t.Context(), client.ObjectKeyFromObject(cm), cm); err != nil {
			t.Fatal(err)
		}
		m := &metav1.PartialObjectMetadata{ObjectMeta: *cm.ObjectMeta.DeepCopy()}
		m.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("ConfigMap"))
		meta = append(meta, m)
	}
	md := metadatafake.NewSimpleMetadataClient(scheme, meta...)
	gc, err := snapshotgc.New(snapshotgc.Config{Metadata: md, Client: c, Namespaces: base, Policy: o.policy(), Key: key, Coalesce: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- gc.Start(ctx) }()
	err = wait.PollUntilContextTimeout(t.Context(), 20*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
		cm := &corev1.ConfigMap{}
		if err := base.Get(ctx, client.ObjectKeyFromObject(unread), cm); !apierrors.IsNotFound(err) {
			return false, nil
		}
		if err := base.Get(ctx, client.ObjectKeyFromObject(read), cm); err != nil {
			return false, err
		}
		return len(cm.OwnerReferences) == 1, nil
	})
	cancel()
	if startErr := <-done; startErr != nil || err != nil {
		t.Fatalf("the controller did not do its work: %v, %v", err, startErr)
	}

	sentAll := append([]sent(nil), rec.sent...)
	for _, a := range md.Actions() {
		sentAll = append(sentAll, sent{resource: a.GetResource().Resource, verb: a.GetVerb()})
	}
	used := map[string]bool{}
	for _, s := range sentAll {
		used[s.resource+"/"+s.verb] = true
		if !permits(ps, o.Namespace, s) {
			t.Errorf("the controller sent %s, which Permissions does not list", s)
		}
	}
	for _, p := range ps {
		if !strings.HasPrefix(p.Why, "snapshotgc:") && !strings.Contains(p.Why, "snapshotgc") {
			continue
		}
		for _, v := range p.Verbs {
			// Secrets take the same path as ConfigMaps; this world has
			// ConfigMaps only.
			if p.Resource != "secrets" && !used[p.Resource+"/"+v] {
				t.Errorf("Permissions lists %s %s (%s), which the controller never sent", v, p.Resource, p.Why)
			}
		}
	}
}
