//go:build e2e

package incluster

import (
	"context"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/confighash/confighash/internal/contract"
	"github.com/confighash/confighash/internal/pinner"
	"github.com/confighash/confighash/internal/pinning"
)

// TestDaemonSetUndoPinned: a DaemonSet in a pinning namespace (one pod on
// the one node) reads ConfigMap shared through env, a mounted file and a
// subPath file. A change rolls its pod onto a new snapshot; `kubectl
// rollout undo daemonset` then puts the first revision back (its stamp, a
// RolledBack halt, no third ControllerRevision) and the pod that replaces
// the second prints the first value from the first snapshot, though the
// ConfigMap holds the new one. The webhook can keep the first stamp only
// because a pod of that revision was pinned, and its snapshots sealed, on
// the node: without pods (the control-plane specs) the undo is re-stamped
// to the live content. Last, an opt-out on the DaemonSet alone (no new
// revision) leaves its next pod unpinned.
func TestDaemonSetUndoPinned(t *testing.T) {
	ctx := env.SpecContext(t)
	ns := pinningNamespace(t)
	cm := sharedConfig(t, ns, map[string]string{"mode": "good"})
	tmpl := pinnedReader(ns, "agent", 1).Spec.Template
	ds := &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "agent"},
		Spec:       appsv1.DaemonSetSpec{Selector: &metav1.LabelSelector{MatchLabels: tmpl.Labels}, Template: tmpl},
	}
	env.Create(t, ds)
	stamp1 := env.StampOf(t, ds)
	first := dsPod(t, ds, stamp1)
	snapshot1 := pinnedTo(t, first)
	expectPinnedValue(t, first, snapshot1, "good")

	env.Update(t, cm, func() { cm.Data["mode"] = "second" })
	second := dsPod(t, ds, stampLeaves(t, ds, stamp1))
	snapshot2 := pinnedTo(t, second)
	if snapshot2 == snapshot1 {
		t.Fatalf("the re-stamped pod %s reads the first snapshot %s", second.Name, snapshot1)
	}
	expectPinnedValue(t, second, snapshot2, "second")

	if out, err := env.Run(ctx, "", "rollout", "undo", "daemonset/"+ds.Name, "-n", ns); err != nil {
		t.Fatalf("kubectl rollout undo: %v\n%s", err, out)
	}
	if got := env.StampOf(t, ds); got != stamp1 {
		t.Fatalf("after the undo the stamp is %s, want the first revision's %s", got, stamp1)
	}
	back := dsPod(t, ds, stamp1)
	if back.UID == first.UID {
		t.Fatalf("after the undo the first pod %s still runs; want a new one", first.Name)
	}
	expectPinnedValue(t, back, snapshot1, "good")
	t.Logf("after the undo, %s printed good from %s; the ConfigMap holds second", back.Name, snapshot1)
	var revs appsv1.ControllerRevisionList
	if err := env.Client.List(ctx, &revs, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	if n := len(revs.Items); n != 2 {
		t.Errorf("%d ControllerRevisions after the undo, want the same 2", n)
	}
	expectRolledBack(t, ds)

	// Opting the DaemonSet out changes only its own metadata: no
	// ControllerRevision carries the annotation, yet the pod that replaces
	// back is unpinned and reads the live ConfigMap.
	env.Update(t, ds, func() { metav1.SetMetaDataAnnotation(&ds.ObjectMeta, pinning.PinAnnotation, pinning.PinOff) })
	if err := env.Client.Delete(ctx, &back); err != nil {
		t.Fatal(err)
	}
	out := dsPod(t, ds, stamp1)
	if out.UID == back.UID {
		t.Fatalf("pod %s still runs after its delete", back.Name)
	}
	if got, want := out.Annotations[pinning.PodAnnotation], "false: "+string(pinner.OptedOut); got != want {
		t.Fatalf("pod %s of the opted-out DaemonSet: %s=%q, want %q", out.Name, pinning.PodAnnotation, got, want)
	}
	expectPrinted(t, out, "second")
}

// dsPod waits until the one pod of DaemonSet ds runs and is Ready with
// template stamp, and returns it.
func dsPod(t *testing.T, ds *appsv1.DaemonSet, stamp string) corev1.Pod {
	t.Helper()
	var pods []corev1.Pod
	err := wait.PollUntilContextTimeout(env.SpecContext(t), 250*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		var err error
		pods, err = podsOf(ctx, ds.Namespace, ds.Name)
		return err == nil && len(pods) == 1 && runningReady(pods[0]) && pods[0].Annotations[contract.ChecksumAnnotation] == stamp, err
	})
	if err != nil {
		t.Fatalf("DaemonSet %s: want one Running, Ready pod stamped %s; have %d pods", ds.Name, stamp, len(pods))
	}
	return pods[0]
}
