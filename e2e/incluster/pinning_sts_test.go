//go:build e2e

package incluster

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestStatefulSetPartitionPinned: a StatefulSet of 4 with partition 2 in a
// pinning namespace reads ConfigMap shared (env, mounted file, subPath
// file). A change re-stamps it; ordinals 2 and 3 roll and print the new
// value, 0 and 1 keep the old revision and print the old one. Deleting pod
// 0 and pod 3 brings each back on its own revision's snapshot: 0 prints
// the old value although the ConfigMap holds the new one. `kubectl rollout
// undo` then puts the first revision back (no third ControllerRevision,
// a RolledBack halt) and every ordinal prints the old value. Without
// pinning, the recreated pod 0 and the undone ordinals read the live
// ConfigMap and print the new value.
func TestStatefulSetPartitionPinned(t *testing.T) {
	ctx := env.SpecContext(t)
	ns := pinningNamespace(t)
	cm := sharedConfig(t, ns, map[string]string{"mode": "good"})
	sts := stsReader(ns, "db", 4, 2)
	env.Create(t, sts)
	rev1 := stsUpdateRevision(t, sts)
	stamp1 := env.StampOf(t, sts)
	pods := stsPods(t, sts, []string{rev1, rev1, rev1, rev1}, nil)
	snapshot1 := pinnedTo(t, pods[0])
	for _, p := range pods {
		expectPinnedValue(t, p, snapshot1, "good")
	}

	changed := time.Now()
	env.Update(t, cm, func() { cm.Data["mode"] = "second" })
	stampLeaves(t, sts, stamp1)
	rev2 := stsUpdateRevision(t, sts)
	if rev2 == rev1 {
		t.Fatalf("re-stamped, but the StatefulSet's update revision is still %s", rev1)
	}
	pods = stsPods(t, sts, []string{rev1, rev1, rev2, rev2}, nil)
	snapshot2 := pinnedTo(t, pods[2])
	stsExpectValues(t, pods, []string{snapshot1, snapshot1, snapshot2, snapshot2}, []string{"good", "good", "second", "second"})
	t.Logf("change -> ordinals 2,3 print second from %s, 0,1 good from %s: %s",
		snapshot2, snapshot1, time.Since(changed).Round(100*time.Millisecond))

	// A deleted pod comes back on its own revision, whatever the
	// ConfigMap holds now.
	deleted := []corev1.Pod{pods[0], pods[3]}
	for i := range deleted {
		if err := env.Client.Delete(ctx, &deleted[i]); err != nil {
			t.Fatal(err)
		}
	}
	pods = stsPods(t, sts, []string{rev1, rev1, rev2, rev2}, deleted)
	stsExpectValues(t, pods, []string{snapshot1, snapshot1, snapshot2, snapshot2}, []string{"good", "good", "second", "second"})
	t.Logf("deleted pods 0 and 3: %s came back printing good, %s printing second", pods[0].Name, pods[3].Name)

	undone := time.Now()
	if out, err := env.Run(ctx, "", "rollout", "undo", "statefulset/"+sts.Name, "-n", ns); err != nil {
		t.Fatalf("kubectl rollout undo: %v\n%s", err, out)
	}
	if got := env.StampOf(t, sts); got != stamp1 {
		t.Fatalf("after the undo the stamp is %s, want the first revision's %s", got, stamp1)
	}
	if got := stsUpdateRevision(t, sts); got != rev1 {
		t.Fatalf("after the undo the update revision is %s, want the first, %s", got, rev1)
	}
	pods = stsPods(t, sts, []string{rev1, rev1, rev1, rev1}, pods[2:])
	stsExpectValues(t, pods, []string{snapshot1, snapshot1, snapshot1, snapshot1}, []string{"good", "good", "good", "good"})
	t.Logf("undo -> every ordinal prints good from %s: %s", snapshot1, time.Since(undone).Round(100*time.Millisecond))
	if n := len(stsRevisions(t, sts)); n != 2 {
		t.Errorf("%d ControllerRevisions after the undo, want the same 2", n)
	}
	expectRolledBack(t, sts)
}

// stsReader is a StatefulSet of replicas pods of pinnedReader's spec, its
// pods started in parallel, rolling only ordinals from partition up.
func stsReader(ns, name string, replicas, partition int32) *appsv1.StatefulSet {
	tmpl := pinnedReader(ns, name, replicas).Spec.Template
	return &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: appsv1.StatefulSetSpec{
			Replicas:            ptr.To(replicas),
			Selector:            &metav1.LabelSelector{MatchLabels: tmpl.Labels},
			ServiceName:         name,
			PodManagementPolicy: appsv1.ParallelPodManagement,
			UpdateStrategy: appsv1.StatefulSetUpdateStrategy{Type: appsv1.RollingUpdateStatefulSetStrategyType,
				RollingUpdate: &appsv1.RollingUpdateStatefulSetStrategy{Partition: ptr.To(partition)}},
			Template: tmpl,
		},
	}
}

// stsUpdateRevision waits until the StatefulSet controller has observed
// sts's latest generation and returns the revision it updates pods to.
func stsUpdateRevision(t *testing.T, sts *appsv1.StatefulSet) string {
	t.Helper()
	err := wait.PollUntilContextTimeout(env.SpecContext(t), 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(sts), sts); err != nil {
			return false, err
		}
		return sts.Status.ObservedGeneration == sts.Generation && sts.Status.UpdateRevision != "", nil
	})
	if err != nil {
		t.Fatalf("StatefulSet %s: generation %d not observed: %+v", sts.Name, sts.Generation, sts.Status)
	}
	return sts.Status.UpdateRevision
}

// stsPods waits until ordinal i of sts runs a Running, Ready pod of
// revision revs[i], none of them one of gone, and returns them by
// ordinal. A container that exits fails at once, with its log.
func stsPods(t *testing.T, sts *appsv1.StatefulSet, revs []string, gone []corev1.Pod) []corev1.Pod {
	t.Helper()
	pods := make([]corev1.Pod, len(revs))
	var missing string
	err := wait.PollUntilContextTimeout(env.SpecContext(t), 250*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		missing = ""
		for i, rev := range revs {
			p := &pods[i]
			if err := env.Client.Get(ctx, client.ObjectKey{Namespace: sts.Namespace, Name: sts.Name + "-" + strconv.Itoa(i)}, p); err != nil {
				missing = fmt.Sprintf("pod %d: %v", i, err)
				return false, client.IgnoreNotFound(err)
			}
			for _, s := range p.Status.ContainerStatuses {
				if s.RestartCount > 0 {
					return false, fmt.Errorf("pod %s: container restarted: %s", p.Name, lastLog(ctx, p.Namespace, p.Name))
				}
			}
			old := slices.ContainsFunc(gone, func(g corev1.Pod) bool { return g.UID == p.UID })
			if old || p.DeletionTimestamp != nil || p.Labels[appsv1.ControllerRevisionHashLabelKey] != rev || p.Status.Phase != corev1.PodRunning || !ready(*p) {
				missing = fmt.Sprintf("pod %s: revision %s, want %s; phase %s, ready %t, deleted %t",
					p.Name, p.Labels[appsv1.ControllerRevisionHashLabelKey], rev, p.Status.Phase, ready(*p), old)
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		t.Fatalf("StatefulSet %s: want ordinals on revisions %v: %s (%v)", sts.Name, revs, missing, err)
	}
	return pods
}

// stsExpectValues checks that pods[i] reads snapshots[i] and printed
// values[i].
func stsExpectValues(t *testing.T, pods []corev1.Pod, snapshots, values []string) {
	t.Helper()
	for i, p := range pods {
		expectPinnedValue(t, p, snapshots[i], values[i])
	}
}

// stsRevisions lists the ControllerRevisions sts controls.
func stsRevisions(t *testing.T, sts *appsv1.StatefulSet) []string {
	t.Helper()
	l := &appsv1.ControllerRevisionList{}
	if err := env.Client.List(env.SpecContext(t), l, client.InNamespace(sts.Namespace)); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, cr := range l.Items {
		if c := metav1.GetControllerOf(&cr); c != nil && c.UID == sts.UID {
			out = append(out, cr.Name)
		}
	}
	return out
}
