//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/confighash/confighash/internal/contract"
	"github.com/confighash/confighash/internal/pinning"
)

// TestPinningPointsPodsAtTheirRevisionsContent: with --pinning, the pods of
// a Deployment in a pinning namespace read snapshots of the content their
// stamp names. After a change, the new ReplicaSet's pods read the new
// content, and a pod the old ReplicaSet makes again (as for a reader that
// waits in a halt) still reads the old. The snapshots live exactly as long
// as the ReplicaSets that own them. No node runs here: what is checked is
// what each pod is told to read, which the kubelet then reads.
func TestPinningPointsPodsAtTheirRevisionsContent(t *testing.T) {
	restartWith(t, "--pinning")
	ns := pinningNamespace(t)
	env.Create(t, configMap(ns, "app", map[string]string{"k": "v1"}))
	env.Create(t, secret(ns, "db", map[string]string{"password": "p1", "unread": "u"}))
	time.Sleep(time.Second) // the Namespace cache sees the label

	spec := podSpec("app", "db")
	d := deploymentOf(ns, "web", spec)
	d.Spec.Replicas = new(int32(2))
	env.Create(t, d)

	first := podsWhere(t, ns, 2, func(p corev1.Pod) bool { return true })
	cmSnap, secretSnap := readsOf(t, first[0])
	for _, p := range first {
		if p.Annotations[pinning.PodAnnotation] != "true" {
			t.Fatalf("pod %s: %s=%q", p.Name, pinning.PodAnnotation, p.Annotations[pinning.PodAnnotation])
		}
		if c, s := readsOf(t, p); c != cmSnap || s != secretSnap {
			t.Fatalf("two pods of one revision read %s/%s and %s/%s", c, s, cmSnap, secretSnap)
		}
	}
	if !strings.HasPrefix(cmSnap, "app-pin-") || !strings.HasPrefix(secretSnap, "db-pin-") {
		t.Fatalf("pods read %s and %s, not snapshots", cmSnap, secretSnap)
	}
	snap := &corev1.ConfigMap{}
	get(t, ns, cmSnap, snap)
	if snap.Data["k"] != "v1" || snap.Immutable == nil || !*snap.Immutable || len(snap.OwnerReferences) != 1 || snap.OwnerReferences[0].Kind != "ReplicaSet" {
		t.Fatalf("snapshot %s: data %v, immutable %v, owners %v", cmSnap, snap.Data, snap.Immutable, snap.OwnerReferences)
	}
	secretCopy := &corev1.Secret{}
	get(t, ns, secretSnap, secretCopy)
	if string(secretCopy.Data["password"]) != "p1" || len(secretCopy.Data) != 1 {
		t.Fatalf("secret snapshot holds %d keys", len(secretCopy.Data))
	}
	oldRS := snap.OwnerReferences[0].Name

	// A change: the hook re-stamps, the new ReplicaSet's pods read the new
	// content; the Secret's snapshot is shared.
	cm := configMap(ns, "app", nil)
	env.Update(t, cm, func() { cm.Data["k"] = "v2" })
	waitStamp(t, d, expectedChecksum(t, ns, &spec, nil), 30*time.Second)
	fresh := podsWhere(t, ns, 1, func(p corev1.Pod) bool { return ownerName(p) != oldRS })
	newCM, newSecret := readsOf(t, fresh[0])
	next := &corev1.ConfigMap{}
	get(t, ns, newCM, next)
	if newCM == cmSnap || next.Data["k"] != "v2" || newSecret != secretSnap {
		t.Fatalf("the new revision reads %s (%v) and %s", newCM, next.Data, newSecret)
	}
	get(t, ns, secretSnap, secretCopy)
	if len(secretCopy.OwnerReferences) != 2 {
		t.Errorf("the shared Secret snapshot has owners %v, want both ReplicaSets", secretCopy.OwnerReferences)
	}

	// The old ReplicaSet still runs (no pod here ever becomes ready, as in
	// a halted change): a pod it makes again reads the old content.
	old := podsWhere(t, ns, 1, func(p corev1.Pod) bool { return ownerName(p) == oldRS })
	if err := env.Client.Delete(env.SpecContext(t), &old[0]); err != nil {
		t.Fatal(err)
	}
	again := podsWhere(t, ns, 1, func(p corev1.Pod) bool {
		return ownerName(p) == oldRS && p.Name != old[0].Name && p.DeletionTimestamp == nil
	})
	if c, _ := readsOf(t, again[0]); c != cmSnap {
		t.Fatalf("a new pod of the old ReplicaSet reads %s, want the old snapshot %s", c, cmSnap)
	}

	// Deleting the Deployment deletes its ReplicaSets, and the garbage
	// collector their snapshots.
	remove(t, d)
	err := wait.PollUntilContextTimeout(env.SpecContext(t), 500*time.Millisecond, 90*time.Second, true, func(ctx context.Context) (bool, error) {
		var cms corev1.ConfigMapList
		var ss corev1.SecretList
		if err := env.Client.List(ctx, &cms, client.InNamespace(ns), client.HasLabels{pinning.SnapshotLabel}); err != nil {
			return false, err
		}
		if err := env.Client.List(ctx, &ss, client.InNamespace(ns), client.HasLabels{pinning.SnapshotLabel}); err != nil {
			return false, err
		}
		return len(cms.Items)+len(ss.Items) == 0, nil
	})
	if err != nil {
		t.Fatalf("snapshots left after the Deployment was deleted: %v", err)
	}
}

// TestPinningOffChangesNoPod: without the namespace label, a pod reads its
// sources by their own names and carries no pinning annotation, even with
// --pinning.
func TestPinningOffChangesNoPod(t *testing.T) {
	restartWith(t, "--pinning")
	ns := env.NewNamespace(t, true)
	env.Create(t, configMap(ns, "app", map[string]string{"k": "v1"}))
	env.Create(t, secret(ns, "db", map[string]string{"password": "p1"}))
	env.Create(t, deploymentOf(ns, "web", podSpec("app", "db")))
	p := podsWhere(t, ns, 1, func(corev1.Pod) bool { return true })[0]
	if c, s := readsOf(t, p); c != "app" || s != "db" {
		t.Errorf("pod reads %s and %s", c, s)
	}
	if _, ok := p.Annotations[pinning.PodAnnotation]; ok || p.Annotations[contract.ChecksumAnnotation] == "" {
		t.Errorf("pod annotations %v", p.Annotations)
	}
}

// podsWhere waits until n pods of ns that match keep exist, and returns them.
func podsWhere(t *testing.T, ns string, n int, keep func(corev1.Pod) bool) []corev1.Pod {
	t.Helper()
	var got []corev1.Pod
	err := wait.PollUntilContextTimeout(env.SpecContext(t), 200*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		var l corev1.PodList
		if err := env.Client.List(ctx, &l, client.InNamespace(ns)); err != nil {
			return false, err
		}
		got = slices.DeleteFunc(l.Items, func(p corev1.Pod) bool { return p.DeletionTimestamp != nil || !keep(p) })
		return len(got) >= n, nil
	})
	if err != nil {
		t.Fatalf("waiting for %d pods in %s: have %d: %v", n, ns, len(got), err)
	}
	return got
}

// readsOf is the ConfigMap and Secret a podSpec pod reads.
func readsOf(t *testing.T, p corev1.Pod) (configMap, secret string) {
	t.Helper()
	c := p.Spec.Containers[0]
	if len(c.EnvFrom) != 1 || len(c.Env) != 1 {
		t.Fatalf("pod %s: %+v", p.Name, c)
	}
	return c.EnvFrom[0].ConfigMapRef.Name, c.Env[0].ValueFrom.SecretKeyRef.Name
}

func ownerName(p corev1.Pod) string {
	if c := metav1.GetControllerOf(&p); c != nil {
		return c.Name
	}
	return ""
}

func get(t *testing.T, ns, name string, obj client.Object) {
	t.Helper()
	if err := env.Client.Get(env.SpecContext(t), client.ObjectKey{Namespace: ns, Name: name}, obj); err != nil {
		t.Fatal(fmt.Errorf("reading %s/%s: %w", ns, name, err))
	}
}

// pinningNamespace is a fresh served namespace labelled for pinning.
func pinningNamespace(t *testing.T) string {
	t.Helper()
	ns := env.NewNamespace(t, true)
	nsObj := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}
	env.Update(t, nsObj, func() { nsObj.Labels[pinning.NamespaceLabel] = pinning.NamespaceEnabled })
	return ns
}

// pinnedApp starts confighash with --pinning and returns a served
// namespace labelled for pinning, with ConfigMap app (k=v1) and Secret db.
func pinnedApp(t *testing.T) string {
	t.Helper()
	restartWith(t, "--pinning")
	ns := pinningNamespace(t)
	env.Create(t, configMap(ns, "app", map[string]string{"k": "v1"}))
	env.Create(t, secret(ns, "db", map[string]string{"password": "p1"}))
	time.Sleep(time.Second) // the Namespace cache sees the label
	return ns
}
