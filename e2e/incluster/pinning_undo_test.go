//go:build e2e

package incluster

import (
	"context"
	"slices"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/confighash/confighash/e2e/framework"
	"github.com/confighash/confighash/internal/contract"
	"github.com/confighash/confighash/internal/waves"
)

// TestUndoRestoresPinnedContent: a reader in a pinning namespace rolls
// from mode=good to mode=second with its ConfigMap; `kubectl rollout undo`
// then puts the first ReplicaSet back, with no new one, and its new pod
// prints good again from the environment, the mounted file and the subPath
// file: it reads the first revision's snapshot, not the live ConfigMap.
// confighash records the rollback (a RolledBack halt) and does not roll it
// forward by itself; the next change of the ConfigMap (the fix) does, once.
// It stays so for a minute, across the deletion of the leader's pod.
// Without pinning the undo is re-stamped to the live content and the pod
// prints second.
func TestUndoRestoresPinnedContent(t *testing.T) {
	first := pinnedFirstRevision(t, nil)
	ns, cm, web := first.ns, first.cm, first.web
	rs1, stamp1, snapshot1 := first.rs, first.stamp, first.snapshot

	env.Update(t, cm, func() { cm.Data["mode"] = "second" })
	rs2 := restampedTo(t, web, stamp1)
	second := readyPods(t, ns, rs2, 1)[0]
	expectPinnedValue(t, second, "", "second")

	back := undoToFirst(t, web, first)
	expectPinnedValue(t, back, snapshot1, "good")
	t.Logf("after the undo, %s of the first ReplicaSet printed good, from %s", back.Name, snapshot1)
	expectRolledBack(t, web)

	// Not rolled forward by itself for a minute, across the leader's
	// deletion: the replica that takes the Lease over reads the halt and
	// leaves the undo where it is. A pod started after the failover still
	// prints good. Then the fix rolls it forward, once.
	heldFor(t, web, stamp1, time.Minute)
	if got := env.CurrentReplicaSet(t, ns, web.Name); got != rs1 || len(env.ReplicaSets(t, ns, web.Name)) != 2 {
		t.Fatalf("a minute after the undo web runs %s of %d ReplicaSets, want the first, %s, of 2", got, len(env.ReplicaSets(t, ns, web.Name)), rs1)
	}
	expectRolledBack(t, web)
	if err := env.Client.Delete(env.SpecContext(t), &back); err != nil {
		t.Fatal(err)
	}
	expectPinnedValue(t, waitNewPod(t, ns, rs1, []corev1.Pod{back}), snapshot1, "good")
	if err := env.WaitRollout(env.SpecContext(t), framework.Namespace, "confighash", 3*time.Minute); err != nil {
		t.Fatalf("confighash did not get its second replica back: %v", err)
	}
	env.Update(t, cm, func() { cm.Data["mode"] = "third" })
	rs3 := restampedTo(t, web, stamp1)
	expectPinnedValue(t, readyPods(t, ns, rs3, 1)[0], "", "third")
	time.Sleep(settle)
	if n := len(env.ReplicaSets(t, ns, web.Name)); n != 3 {
		t.Errorf("%d ReplicaSets after the fix, want 3", n)
	}
}

// heldFor checks every second, for period, that d keeps stamp; a third of the
// way in it deletes the leader's pod and waits for another replica to take
// the Lease over.
func heldFor(t *testing.T, d *appsv1.Deployment, stamp string, period time.Duration) {
	t.Helper()
	start, checked := time.Now(), time.Time{}
	// deleteLeaderOnce polls every 20 ms: read the stamp once a second.
	held := func() {
		if time.Since(checked) < time.Second {
			return
		}
		checked = time.Now()
		if got := env.StampOf(t, d); got != stamp {
			t.Fatalf("%s re-stamped to %s %s after the undo, with no change", d.Name, got, time.Since(start).Round(time.Second))
		}
	}
	deleteLeaderOnce(t, func() bool { held(); return time.Since(start) >= period/3 })
	err := wait.PollUntilContextTimeout(env.SpecContext(t), time.Second, period, true, func(context.Context) (bool, error) {
		held()
		return time.Since(start) >= period, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checked = time.Time{}
	held()
	t.Logf("%s kept its stamp for %s after the undo, across the leader's deletion", d.Name, time.Since(start).Round(time.Second))
}

// expectRolledBack checks that workload w carries a RolledBack halt.
func expectRolledBack(t *testing.T, w client.Object) {
	t.Helper()
	halt, err := contract.ParseHalt(contract.Unsealed(annotationOf(t, w, contract.HaltAnnotation)))
	if err != nil || halt.Reason != waves.RolledBack {
		t.Fatalf("%s's halt after the undo: %+v (%v), want %s", w.GetName(), halt, err, waves.RolledBack)
	}
}

// undoToFirst runs `kubectl rollout undo` of web, now on its second
// revision, waits for the rollout, checks that it is back on first's
// stamp and ReplicaSet (of 2), and returns that ReplicaSet's ready pod.
func undoToFirst(t *testing.T, web *appsv1.Deployment, first firstRevision) corev1.Pod {
	t.Helper()
	ctx, ns := env.SpecContext(t), web.Namespace
	if out, err := env.Run(ctx, "", "rollout", "undo", "deployment/"+web.Name, "-n", ns); err != nil {
		t.Fatalf("kubectl rollout undo: %v\n%s", err, out)
	}
	if err := env.WaitRollout(ctx, ns, web.Name, 3*time.Minute); err != nil {
		t.Fatal(err)
	}
	if got := env.StampOf(t, web); got != first.stamp {
		t.Fatalf("after the undo the stamp is %s, want the first revision's %s", got, first.stamp)
	}
	if got, n := env.CurrentReplicaSet(t, ns, web.Name), len(env.ReplicaSets(t, ns, web.Name)); got != first.rs || n != 2 {
		t.Fatalf("after the undo web runs %s of %d ReplicaSets, want the first, %s, of 2", got, n, first.rs)
	}
	return readyPods(t, ns, first.rs, 1)[0]
}

// restampedTo waits until the hook re-stamps d away from stamp and its
// rollout completes, and returns its new ReplicaSet.
func restampedTo(t *testing.T, d *appsv1.Deployment, stamp string) string {
	t.Helper()
	ctx := env.SpecContext(t)
	stampLeaves(t, d, stamp)
	if err := env.WaitRollout(ctx, d.Namespace, d.Name, 3*time.Minute); err != nil {
		t.Fatal(err)
	}
	return env.CurrentReplicaSet(t, d.Namespace, d.Name)
}

// stampLeaves waits until the hook re-stamps workload w away from stamp,
// and returns its new stamp.
func stampLeaves(t *testing.T, w client.Object, stamp string) string {
	t.Helper()
	var got string
	err := wait.PollUntilContextTimeout(env.SpecContext(t), 250*time.Millisecond, 2*time.Minute, true, func(context.Context) (bool, error) {
		got = env.StampOf(t, w)
		return got != stamp, nil
	})
	if err != nil {
		t.Fatalf("%s was not re-stamped", w.GetName())
	}
	return got
}

// expectPinnedValue checks that pod p is pinned (to snapshot, unless "")
// and printed value from its environment, mounted file and subPath file.
func expectPinnedValue(t *testing.T, p corev1.Pod, snapshot, value string) {
	t.Helper()
	if got := pinnedTo(t, p); snapshot != "" && got != snapshot {
		t.Errorf("pod %s reads %s, want %s", p.Name, got, snapshot)
	}
	expectPrinted(t, p, value)
}

// expectPrinted checks that pod p printed value from its environment,
// mounted file and subPath file.
func expectPrinted(t *testing.T, p corev1.Pod, value string) {
	t.Helper()
	want := []string{"env:MODE=" + value, "file:/config/mode=" + value, "file:/sub/mode=" + value}
	got := podLog(t, p.Namespace, p.Name, len(want))
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Fatalf("pod %s printed %q, want %q", p.Name, got, want)
	}
}

// firstRevision is a pinned reader's first revision: its namespace, its
// ConfigMap, the reader, and its ReplicaSet, stamp and snapshot.
type firstRevision struct {
	ns                  string
	cm                  *corev1.ConfigMap
	web                 *appsv1.Deployment
	rs, stamp, snapshot string
}

// pinnedFirstRevision makes, in a new pinning namespace, ConfigMap shared
// (mode=good) and a pinnedReader web of one replica with annotations,
// waits for its rollout, and returns its first revision.
func pinnedFirstRevision(t *testing.T, annotations map[string]string) firstRevision {
	t.Helper()
	ctx := env.SpecContext(t)
	ns := pinningNamespace(t)
	cm := sharedConfig(t, ns, map[string]string{"mode": "good"})
	web := pinnedReader(ns, "web", 1)
	web.Annotations = annotations
	env.Create(t, web)
	if err := env.WaitRollout(ctx, ns, web.Name, 3*time.Minute); err != nil {
		t.Fatal(err)
	}
	rs := env.CurrentReplicaSet(t, ns, web.Name)
	return firstRevision{ns: ns, cm: cm, web: web, rs: rs, stamp: env.StampOf(t, web), snapshot: pinnedTo(t, readyPods(t, ns, rs, 1)[0])}
}
