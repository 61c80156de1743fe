//go:build e2e

package incluster

import (
	"context"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/confighash/confighash/internal/pinner"
	"github.com/confighash/confighash/internal/pinning"
	"github.com/confighash/confighash/internal/status"
)

// TestPinningFailurePaths: in a pinning namespace, each way a pod cannot be
// pinned still creates the pod, never denies it, and says so; the pod reads
// the live content, which is its stamp's, never another's.
//
//   - quota: a ResourceQuota on count/configmaps at the namespace's count
//     refuses the new revision's snapshot; its pod runs unpinned with the
//     reason quota-exceeded (its annotation, a PodUnpinned Event, status),
//     printing the new value; once the quota is gone, a new pod of the
//     same revision is pinned.
//   - webhook-down: with confighash at zero replicas a scale-up's pod is
//     created without any pinning mark; once confighash is back, status
//     counts it as not seen by the pod webhook, apart from the pinned one,
//     and the replacement of that pod, deleted, is pinned.
//   - dry-run: a server-side dry run of a pod of a revision that has no
//     snapshot yet is admitted unpinned (dry-run) and writes nothing; once
//     a real pod made the snapshot, a dry run is pinned to it and writes
//     nothing either.
//   - look-alike: a tenant creates, before the change, a ConfigMap under
//     the very name the new content's snapshot gets, with other content;
//     the new revision's pod is admitted unpinned (look-alike), prints the
//     new value, and the look-alike is left as it was.
func TestPinningFailurePaths(t *testing.T) {
	t.Run("quota", testFailureQuota)
	t.Run("webhook-down", testFailureWebhookDown)
	t.Run("dry-run", testFailureDryRun)
	t.Run("look-alike", testFailureLookAlike)
}

func testFailureQuota(t *testing.T) {
	ctx := env.SpecContext(t)
	ns, cm, web, rs1 := failureReader(t, "web", 1)
	snapshot1 := pinnedTo(t, readyPods(t, ns, rs1, 1)[0])
	stamp1 := env.StampOf(t, web)

	failureQuotaAtCount(t, ns)
	env.Update(t, cm, func() { cm.Data["mode"] = "two" })
	rs2 := restampedTo(t, web, stamp1)
	unpinned := readyPods(t, ns, rs2, 1)[0]
	failureExpectUnpinned(t, unpinned, pinner.QuotaExceeded, "two")
	if got := failureSnapshots(t, ns); len(got) != 1 || got[0].Name != snapshot1 {
		t.Errorf("snapshots under the quota: %v, want only %s", failureNames(got), snapshot1)
	}
	failureExpectEvent(t, web, pinner.QuotaExceeded)
	failurePinningStatus(t, ns, web.Name, "its one pod unpinned (quota-exceeded)", func(p status.Pinning) bool {
		return p.Pods == 1 && p.Unpinned[string(pinner.QuotaExceeded)] == 1
	})

	// Lifting the quota: the next pod of the same revision is pinned.
	if err := env.Client.DeleteAllOf(ctx, &corev1.ResourceQuota{}, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Delete(ctx, &unpinned); err != nil {
		t.Fatal(err)
	}
	expectPinnedValue(t, waitNewPod(t, ns, rs2, []corev1.Pod{unpinned}), "", "two")
}

func testFailureWebhookDown(t *testing.T) {
	ctx := env.SpecContext(t)
	ns, _, web, rs := failureReader(t, "web", 1)
	pinnedPod := readyPods(t, ns, rs, 1)[0]
	pinnedTo(t, pinnedPod)

	if err := env.Confighash.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if len(confighashPods(t)) == 0 {
			_ = env.Confighash.Start(env.SpecContext(t))
		}
	})
	env.Update(t, web, func() { web.Spec.Replicas = ptr.To[int32](2) })
	unseen := waitNewPod(t, ns, rs, []corev1.Pod{pinnedPod})
	if v, ok := unseen.Annotations[pinning.PodAnnotation]; ok {
		t.Fatalf("pod %s created while confighash was down carries %s=%q", unseen.Name, pinning.PodAnnotation, v)
	}
	failureExpectLive(t, unseen, "one")
	if err := env.Confighash.Start(ctx); err != nil {
		t.Fatal(err)
	}

	failurePinningStatus(t, ns, web.Name, "1 of 2 pods pinned, 1 not seen by the pod webhook", func(p status.Pinning) bool {
		return p.Pods == 2 && p.Pinned == 1 && p.NotSeen == 1 && len(p.Unpinned) == 0
	})

	// What docs/troubleshooting.md says to do: delete it once the webhook
	// answers; its replacement is pinned.
	if err := env.Client.Delete(ctx, &unseen); err != nil {
		t.Fatal(err)
	}
	expectPinnedValue(t, waitNewPod(t, ns, rs, []corev1.Pod{pinnedPod, unseen}), pinnedTo(t, pinnedPod), "one")
}

func testFailureDryRun(t *testing.T) {
	ctx := env.SpecContext(t)
	// No replica: its revision has no pod, so no snapshot yet.
	ns, _, dry, rsName := failureReader(t, "dry", 0)
	rs := &appsv1.ReplicaSet{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: rsName}, rs); err != nil {
		t.Fatal(err)
	}

	pod := failurePodOf(rs, "dry-1")
	if err := env.Client.Create(ctx, pod, client.DryRunAll); err != nil {
		t.Fatalf("dry run of a pod of %s: %v", rsName, err)
	}
	if got := pod.Annotations[pinning.PodAnnotation]; got != "false: "+string(pinner.DryRun) {
		t.Errorf("the dry run's pod says %s=%q, want false: %s", pinning.PodAnnotation, got, pinner.DryRun)
	}
	if got := pod.Spec.Volumes[0].ConfigMap.Name; got != "shared" {
		t.Errorf("the dry run's pod reads %s, want shared", got)
	}
	if got := failureSnapshots(t, ns); len(got) != 0 {
		t.Fatalf("a dry run wrote snapshots %v", failureNames(got))
	}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(pod), &corev1.Pod{}); !apierrors.IsNotFound(err) {
		t.Fatalf("the dry run's pod was stored (%v)", err)
	}

	// A real pod makes the snapshot; a dry run now is pinned to it and
	// writes nothing.
	env.Update(t, dry, func() { dry.Spec.Replicas = ptr.To[int32](1) })
	snapshot := pinnedTo(t, readyPods(t, ns, rsName, 1)[0])
	before := failureSnapshots(t, ns)
	pod = failurePodOf(rs, "dry-2")
	if err := env.Client.Create(ctx, pod, client.DryRunAll); err != nil {
		t.Fatalf("dry run of a pod of %s: %v", rsName, err)
	}
	if got := pinnedTo(t, *pod); got != snapshot {
		t.Errorf("the second dry run's pod reads %s, want %s", got, snapshot)
	}
	after := failureSnapshots(t, ns)
	if len(before) != 1 || len(after) != 1 || after[0].ResourceVersion != before[0].ResourceVersion {
		t.Errorf("snapshots %v (resourceVersion %v) before the second dry run, %v (%v) after: want one, unchanged",
			failureNames(before), before, failureNames(after), after)
	}
}

func testFailureLookAlike(t *testing.T) {
	ctx := env.SpecContext(t)
	ns, cm, web, rs1 := failureReader(t, "web", 1)
	snapshot1 := pinnedTo(t, readyPods(t, ns, rs1, 1)[0])
	stamp1 := env.StampOf(t, web)
	nameOf := lookalikeNamer(t, web)
	if got := nameOf("one"); got != snapshot1 {
		t.Fatalf("the snapshot name computed for mode=one is %s, but web's pod reads %s", got, snapshot1)
	}

	// A tenant's ConfigMap under the name the snapshot of mode=two will
	// have: immutable, naming its source, but another value and no seal
	// (the admission policy refuses the snapshot label to tenants).
	fake := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: nameOf("two"),
			Annotations: map[string]string{pinning.SnapshotOfAnnotation: "configmap/shared"}},
		Data:      map[string]string{"mode": "lookalike"},
		Immutable: ptr.To(true),
	}
	env.Create(t, fake)
	rv := fake.ResourceVersion

	env.Update(t, cm, func() { cm.Data["mode"] = "two" })
	rs2 := restampedTo(t, web, stamp1)
	failureExpectUnpinned(t, readyPods(t, ns, rs2, 1)[0], pinner.LookAlike, "two")
	failureExpectEvent(t, web, pinner.LookAlike)
	failurePinningStatus(t, ns, web.Name, "its one pod unpinned (look-alike)", func(p status.Pinning) bool {
		return p.Pods == 1 && p.Unpinned[string(pinner.LookAlike)] == 1
	})
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(fake), fake); err != nil {
		t.Fatal(err)
	}
	if fake.ResourceVersion != rv || len(fake.OwnerReferences) != 0 || len(fake.Labels) != 0 {
		t.Errorf("the look-alike was written to: resourceVersion %s (was %s), owners %v, labels %v", fake.ResourceVersion, rv, fake.OwnerReferences, fake.Labels)
	}
}

// failureQuotaAtCount caps count/configmaps in ns at the number it holds
// now, and checks that a tenant's create is refused.
func failureQuotaAtCount(t *testing.T, ns string) {
	t.Helper()
	ctx := env.SpecContext(t)
	l := &corev1.ConfigMapList{}
	if err := env.Client.List(ctx, l, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	n := *resource.NewQuantity(int64(len(l.Items)), resource.DecimalSI)
	q := &corev1.ResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "configmaps"},
		Spec:       corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{"count/configmaps": n}},
	}
	env.Create(t, q)
	// The lane's controller-manager runs no quota controller: its status
	// is written here as that controller would, used being the count.
	q.Status = corev1.ResourceQuotaStatus{Hard: q.Spec.Hard, Used: corev1.ResourceList{"count/configmaps": n}}
	if err := env.Client.Status().Update(ctx, q); err != nil {
		t.Fatal(err)
	}
	// The quota admission plugin reads quotas from its informer, which
	// takes a moment to see this one; it checks dry runs too.
	var err error
	poll := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 15*time.Second, true, func(ctx context.Context) (bool, error) {
		probe := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "probe"}}
		err = env.Client.Create(ctx, probe, client.DryRunAll)
		return apierrors.IsForbidden(err), nil
	})
	if poll != nil || !strings.Contains(err.Error(), "exceeded quota") {
		t.Fatalf("with count/configmaps at %s, a create gave %v, want refused for exceeding the quota", n.String(), err)
	}
	t.Logf("count/configmaps capped at %s: %v", n.String(), err)
}

// failureReader makes a pinning namespace with ConfigMap shared (mode=one)
// and a pinnedReader of it, rolled out, and returns its current ReplicaSet.
func failureReader(t *testing.T, name string, replicas int32) (string, *corev1.ConfigMap, *appsv1.Deployment, string) {
	t.Helper()
	ns := pinningNamespace(t)
	cm := sharedConfig(t, ns, map[string]string{"mode": "one"})
	d := pinnedReader(ns, name, replicas)
	env.Create(t, d)
	if err := env.WaitRollout(env.SpecContext(t), ns, d.Name, 3*time.Minute); err != nil {
		t.Fatal(err)
	}
	return ns, cm, d, env.CurrentReplicaSet(t, ns, d.Name)
}
