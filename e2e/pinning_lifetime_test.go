//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/confighash/confighash/internal/pinning"
)

// TestPinningSnapshotsLiveAsLongAsTheirRevisions: with revisionHistoryLimit
// 2, five changes leave exactly the snapshots of the three ReplicaSets kept
// (the Secret's one snapshot shared by all of them and by a second
// Deployment), within a minute; deleting the workloads, one in the
// foreground and one in the background, leaves none. This is the garbage
// collector's work on the owner references the pinner writes.
func TestPinningSnapshotsLiveAsLongAsTheirRevisions(t *testing.T) {
	restartWith(t, "--pinning")
	ns := pinningNamespace(t)
	env.Create(t, configMap(ns, "app", map[string]string{"k": "v0"}))
	env.Create(t, configMap(ns, "other", map[string]string{"k": "o"}))
	env.Create(t, secret(ns, "db", map[string]string{"password": "p1"}))
	time.Sleep(time.Second) // the Namespace cache sees the label
	keepReady(t, ns)

	d := deploymentOf(ns, "web", podSpec("app", "db"))
	d.Spec.RevisionHistoryLimit = new(int32(2))
	env.Create(t, d)
	other := deploymentOf(ns, "other", podSpec("other", "db"))
	other.Spec.Selector.MatchLabels = map[string]string{"app": "other"}
	other.Spec.Template.Labels = map[string]string{"app": "other"}
	env.Create(t, other)
	waitComplete(t, d)
	waitComplete(t, other)

	cm := configMap(ns, "app", nil)
	for i := 1; i <= 5; i++ {
		env.Update(t, cm, func() { cm.Data["k"] = fmt.Sprintf("v%d", i) })
		spec := podSpec("app", "db")
		waitStamp(t, d, expectedChecksum(t, ns, &spec, nil), 30*time.Second)
		waitComplete(t, d)
	}

	// Only the live revisions' snapshots remain: three of app's, one of
	// db's owned by every live ReplicaSet, and other's.
	var live []string
	err := wait.PollUntilContextTimeout(env.SpecContext(t), time.Second, time.Minute, true, func(ctx context.Context) (bool, error) {
		rs := env.ReplicaSets(t, ns, "web")
		if len(rs) != 3 {
			return false, nil
		}
		live = live[:0]
		for _, r := range append(rs, env.ReplicaSets(t, ns, "other")...) {
			live = append(live, string(r.UID))
		}
		return snapshotsOwnedBy(t, ns, live) == nil, nil
	})
	if err != nil {
		t.Fatalf("after five changes: %v", snapshotsOwnedBy(t, ns, live))
	}
	cms, secrets := snapshots(t, ns)
	if len(cms) != 4 || len(secrets) != 1 || len(secrets[0].OwnerReferences) != 4 {
		t.Fatalf("want 3 snapshots of app, 1 of other and 1 of db owned by all 4 ReplicaSets; have %s and %s", names(cms), names(secrets))
	}

	// Deleting the workloads deletes their ReplicaSets, then the garbage
	// collector the snapshots: web in the foreground, other in the
	// background.
	if err := env.Client.Delete(env.SpecContext(t), d, client.PropagationPolicy(metav1.DeletePropagationForeground)); err != nil {
		t.Fatal(err)
	}
	waitSnapshots(t, ns, func(cms, secrets []metav1.ObjectMeta) bool {
		return len(cms) == 1 && len(secrets) == 1 && len(secrets[0].OwnerReferences) == 1
	}, "only other's snapshots, db's owned by other's ReplicaSet alone")
	if err := env.Client.Delete(env.SpecContext(t), other, client.PropagationPolicy(metav1.DeletePropagationBackground)); err != nil {
		t.Fatal(err)
	}
	waitSnapshots(t, ns, func(cms, secrets []metav1.ObjectMeta) bool { return len(cms)+len(secrets) == 0 }, "no snapshot")
}

// TestPinningOrphanedSnapshotsFollowTheirPods: a ReplicaSet deleted with
// --cascade=orphan loses its place as an owner of its snapshots (the
// garbage collector strips it from them as from its pods), yet its pods run
// on, reading them. The snapshots become theirs, owned by exactly those
// pods, and go with the last of them.
func TestPinningOrphanedSnapshotsFollowTheirPods(t *testing.T) {
	ns := pinnedApp(t)

	d := deploymentOf(ns, "web", podSpec("app", "db"))
	d.Spec.Replicas = new(int32(2))
	env.Create(t, d)
	pods := podsWhere(t, ns, 2, func(corev1.Pod) bool { return true })
	cmSnap, secretSnap := readsOf(t, pods[0])
	rs := env.CurrentReplicaSet(t, ns, "web")

	// The Deployment goes, its ReplicaSet stays; then the ReplicaSet, its
	// two pods run on.
	env.Kubectl(t, "", "delete", "-n", ns, "deployment", "web", "--cascade=orphan")
	env.Kubectl(t, "", "delete", "-n", ns, "replicaset", rs, "--cascade=orphan")
	want := uids(pods)
	waitSnapshots(t, ns, func(cms, secrets []metav1.ObjectMeta) bool {
		for _, m := range append(cms, secrets...) {
			var got []types.UID
			for _, o := range m.OwnerReferences {
				got = append(got, o.UID)
			}
			slices.Sort(got)
			if !slices.Equal(got, want) {
				return false
			}
		}
		return len(cms) == 1 && len(secrets) == 1 && cms[0].Name == cmSnap && secrets[0].Name == secretSnap
	}, fmt.Sprintf("%s and %s owned by exactly the pods %v", cmSnap, secretSnap, want))

	// One pod goes: the other still reads both. Then the last: nothing
	// is left.
	if err := env.Client.Delete(env.SpecContext(t), &pods[0]); err != nil {
		t.Fatal(err)
	}
	time.Sleep(settle)
	waitSnapshots(t, ns, func(cms, secrets []metav1.ObjectMeta) bool {
		return len(cms) == 1 && len(secrets) == 1
	}, "both snapshots kept for the pod left")
	if err := env.Client.Delete(env.SpecContext(t), &pods[1]); err != nil {
		t.Fatal(err)
	}
	waitSnapshots(t, ns, func(cms, secrets []metav1.ObjectMeta) bool { return len(cms)+len(secrets) == 0 }, "no snapshot")
}

// TestPinningUnreadOrphanedSnapshotIsDeleted: an old ReplicaSet, its pods
// gone, deleted with --cascade=orphan would leave its own snapshot with no
// owner, for good; nothing reads it, so it is deleted. The snapshot it
// shared with the live ReplicaSet stays, owned by that one.
func TestPinningUnreadOrphanedSnapshotIsDeleted(t *testing.T) {
	ns := pinnedApp(t)
	keepReady(t, ns)

	d := deploymentOf(ns, "web", podSpec("app", "db"))
	env.Create(t, d)
	waitComplete(t, d)
	oldRS := env.CurrentReplicaSet(t, ns, "web")
	cm := configMap(ns, "app", nil)
	env.Update(t, cm, func() { cm.Data["k"] = "v2" })
	spec := podSpec("app", "db")
	waitStamp(t, d, expectedChecksum(t, ns, &spec, nil), 30*time.Second)
	waitComplete(t, d)
	newRS := env.CurrentReplicaSet(t, ns, "web")
	cmSnap, secretSnap := readsOf(t, podsWhere(t, ns, 1, func(p corev1.Pod) bool { return ownerName(p) == newRS })[0])

	env.Kubectl(t, "", "delete", "-n", ns, "replicaset", oldRS, "--cascade=orphan")
	waitSnapshots(t, ns, func(cms, secrets []metav1.ObjectMeta) bool {
		return len(cms) == 1 && cms[0].Name == cmSnap && len(secrets) == 1 && secrets[0].Name == secretSnap &&
			len(secrets[0].OwnerReferences) == 1 && secrets[0].OwnerReferences[0].Name == newRS
	}, "the old revision's snapshot deleted, the live one's kept")
}

// TestPinningSnapshotsOrphanedWhileNoLeaderRan: two Deployments of the
// same content share their snapshots. One is deleted with --cascade=orphan,
// then its ReplicaSet, while confighash is down: the snapshots keep the
// other Deployment's ReplicaSet as their owner, and would go with it under
// the orphaned pod. The leader that starts looks at every namespace with
// snapshots once: the orphaned pod becomes an owner, and keeps them after
// the other Deployment is gone.
func TestPinningSnapshotsOrphanedWhileNoLeaderRan(t *testing.T) {
	ns := pinnedApp(t)

	web := deploymentOf(ns, "web", podSpec("app", "db"))
	env.Create(t, web)
	pod := podsWhere(t, ns, 1, func(corev1.Pod) bool { return true })[0]
	other := deploymentOf(ns, "other", podSpec("app", "db"))
	other.Spec.Selector.MatchLabels = map[string]string{"app": "other"}
	other.Spec.Template.Labels = map[string]string{"app": "other"}
	env.Create(t, other)
	podsWhere(t, ns, 2, func(corev1.Pod) bool { return true })
	waitSnapshots(t, ns, func(cms, secrets []metav1.ObjectMeta) bool {
		return len(cms) == 1 && len(secrets) == 1 && len(cms[0].OwnerReferences) == 2 && len(secrets[0].OwnerReferences) == 2
	}, "one snapshot each, owned by both ReplicaSets")
	webRS := ownerName(pod)

	if err := env.Confighash.Stop(env.SpecContext(t)); err != nil {
		t.Fatal(err)
	}
	env.Kubectl(t, "", "delete", "-n", ns, "deployment", "web", "--cascade=orphan")
	env.Kubectl(t, "", "delete", "-n", ns, "replicaset", webRS, "--cascade=orphan")
	waitSnapshots(t, ns, func(cms, secrets []metav1.ObjectMeta) bool {
		return len(cms) == 1 && len(secrets) == 1 && len(cms[0].OwnerReferences) == 1 && len(secrets[0].OwnerReferences) == 1
	}, "the orphaned ReplicaSet stripped from both")
	if err := env.Confighash.Start(env.SpecContext(t), "--pinning"); err != nil {
		t.Fatal(err)
	}
	ownedByPod := func(cms, secrets []metav1.ObjectMeta) bool {
		for _, m := range append(cms, secrets...) {
			if !slices.ContainsFunc(m.OwnerReferences, func(o metav1.OwnerReference) bool { return o.UID == pod.UID }) {
				return false
			}
		}
		return len(cms) == 1 && len(secrets) == 1
	}
	waitSnapshots(t, ns, ownedByPod, "both snapshots owned by the orphaned pod "+pod.Name)

	if err := env.Client.Delete(env.SpecContext(t), other, client.PropagationPolicy(metav1.DeletePropagationBackground)); err != nil {
		t.Fatal(err)
	}
	time.Sleep(settle)
	waitSnapshots(t, ns, ownedByPod, "both snapshots kept for the orphaned pod")
	if err := env.Client.Delete(env.SpecContext(t), &pod); err != nil {
		t.Fatal(err)
	}
	waitSnapshots(t, ns, func(cms, secrets []metav1.ObjectMeta) bool { return len(cms)+len(secrets) == 0 }, "no snapshot")
}

// TestPinningStatefulSetSnapshotsFollowTheirRevision: a StatefulSet's pod
// is covered by its ControllerRevision, which owns its snapshots, not by its
// controller: a look at the namespace (a leader's start) adds no owner.
// Once that revision is deleted with --cascade=orphan, the pod, still
// running, becomes the owner, and the snapshots go with it.
func TestPinningStatefulSetSnapshotsFollowTheirRevision(t *testing.T) {
	ns := pinnedApp(t)

	sts := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"}, Spec: appsv1.StatefulSetSpec{
		Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "e2e"}}, Template: template(podSpec("app", "db")),
	}}
	env.Create(t, sts)
	pod := podsWhere(t, ns, 1, func(corev1.Pod) bool { return true })[0]
	if pod.Annotations[pinning.PodAnnotation] != "true" {
		t.Fatalf("pod %s: %s=%q", pod.Name, pinning.PodAnnotation, pod.Annotations[pinning.PodAnnotation])
	}
	revision := pod.Labels[appsv1.ControllerRevisionHashLabelKey]
	ownedBy := func(kind, name string) func(cms, secrets []metav1.ObjectMeta) bool {
		return func(cms, secrets []metav1.ObjectMeta) bool {
			for _, m := range append(cms, secrets...) {
				if len(m.OwnerReferences) != 1 || m.OwnerReferences[0].Kind != kind || m.OwnerReferences[0].Name != name {
					return false
				}
			}
			return len(cms) == 1 && len(secrets) == 1
		}
	}
	waitSnapshots(t, ns, ownedBy("ControllerRevision", revision), "both snapshots owned by ControllerRevision "+revision)

	restartWith(t, "--pinning") // the new leader looks at every namespace with snapshots
	time.Sleep(settle)
	waitSnapshots(t, ns, ownedBy("ControllerRevision", revision), "both snapshots owned by ControllerRevision "+revision+" alone")

	env.Kubectl(t, "", "delete", "-n", ns, "statefulset", "web", "--cascade=orphan")
	env.Kubectl(t, "", "delete", "-n", ns, "controllerrevision", revision, "--cascade=orphan")
	waitSnapshots(t, ns, ownedBy("Pod", pod.Name), "both snapshots owned by the pod "+pod.Name)
	if err := env.Client.Delete(env.SpecContext(t), &pod); err != nil {
		t.Fatal(err)
	}
	waitSnapshots(t, ns, func(cms, secrets []metav1.ObjectMeta) bool { return len(cms)+len(secrets) == 0 }, "no snapshot")
}

// keepReady marks every pod of ns ready until the spec ends: no node runs
// them here, and a Deployment prunes its old ReplicaSets
// (revisionHistoryLimit) only once its rollout completes.
func keepReady(t *testing.T, ns string) {
	t.Helper()
	ctx, cancel := context.WithCancel(env.SpecContext(t))
	done := make(chan struct{})
	t.Cleanup(func() { cancel(); <-done })
	go func() {
		defer close(done)
		_ = wait.PollUntilContextCancel(ctx, 200*time.Millisecond, true, func(ctx context.Context) (bool, error) {
			var l corev1.PodList
			if err := env.Client.List(ctx, &l, client.InNamespace(ns)); err != nil {
				return false, nil //nolint:nilerr // tried again at the next tick, until the spec ends
			}
			for i := range l.Items {
				p := &l.Items[i]
				if p.DeletionTimestamp != nil || slices.ContainsFunc(p.Status.Conditions, func(c corev1.PodCondition) bool {
					return c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue
				}) {
					continue
				}
				base := p.DeepCopy()
				p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.Now()})
				if err := env.Client.Status().Patch(ctx, p, client.MergeFrom(base)); err != nil {
					t.Logf("marking pod %s ready: %v", p.Name, err)
				}
			}
			return false, nil
		})
	}()
}

// waitComplete waits until d's rollout of its current template completes.
func waitComplete(t *testing.T, d *appsv1.Deployment) {
	t.Helper()
	err := wait.PollUntilContextTimeout(env.SpecContext(t), 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(d), d); err != nil {
			return false, err
		}
		s, want := d.Status, *d.Spec.Replicas
		return s.ObservedGeneration >= d.Generation && s.UpdatedReplicas == want && s.AvailableReplicas == want && s.Replicas == want, nil
	})
	if err != nil {
		t.Fatalf("%s: rollout not complete: %+v: %v", d.Name, d.Status, err)
	}
}

// snapshots lists the snapshots of ns, ConfigMaps and Secrets, metadata
// only.
func snapshots(t *testing.T, ns string) (cms, secrets []metav1.ObjectMeta) {
	t.Helper()
	ctx := env.SpecContext(t)
	var cl corev1.ConfigMapList
	var sl corev1.SecretList
	if err := env.Client.List(ctx, &cl, client.InNamespace(ns), client.HasLabels{pinning.SnapshotLabel}); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.List(ctx, &sl, client.InNamespace(ns), client.HasLabels{pinning.SnapshotLabel}); err != nil {
		t.Fatal(err)
	}
	for _, c := range cl.Items {
		cms = append(cms, c.ObjectMeta)
	}
	for _, s := range sl.Items {
		secrets = append(secrets, s.ObjectMeta)
	}
	return cms, secrets
}

// snapshotsOwnedBy says how ns's snapshots differ from "every snapshot has
// an owner among owners, and every owner owns a snapshot", nil when they do
// not.
func snapshotsOwnedBy(t *testing.T, ns string, owners []string) error {
	t.Helper()
	cms, secrets := snapshots(t, ns)
	seen := map[string]bool{}
	for _, m := range append(cms, secrets...) {
		kept := false
		for _, o := range m.OwnerReferences {
			if slices.Contains(owners, string(o.UID)) {
				kept, seen[string(o.UID)] = true, true
			}
		}
		if !kept {
			return fmt.Errorf("snapshot %s owned by %s, none of them live", m.Name, ownersOf(m))
		}
	}
	if len(seen) != len(owners) {
		return fmt.Errorf("%d of the %d live revisions own a snapshot: %s and %s", len(seen), len(owners), names(cms), names(secrets))
	}
	return nil
}

// waitSnapshots waits a minute at most until ns's snapshots satisfy ok.
func waitSnapshots(t *testing.T, ns string, ok func(cms, secrets []metav1.ObjectMeta) bool, what string) {
	t.Helper()
	var cms, secrets []metav1.ObjectMeta
	err := wait.PollUntilContextTimeout(env.SpecContext(t), time.Second, time.Minute, true, func(context.Context) (bool, error) {
		cms, secrets = snapshots(t, ns)
		return ok(cms, secrets), nil
	})
	if err != nil {
		t.Fatalf("want %s within a minute; have %s and %s", what, names(cms), names(secrets))
	}
}

// names shows snapshots with their owners, for a failure message.
func names(ms []metav1.ObjectMeta) string {
	out := make([]string, 0, len(ms))
	for _, m := range ms {
		out = append(out, m.Name+ownersOf(m))
	}
	sort.Strings(out)
	return fmt.Sprint(out)
}

func ownersOf(m metav1.ObjectMeta) string {
	var os []string
	for _, o := range m.OwnerReferences {
		os = append(os, o.Kind+"/"+o.Name)
	}
	return fmt.Sprint(os)
}

// uids are the pods' UIDs, sorted.
func uids(pods []corev1.Pod) []types.UID {
	out := make([]types.UID, 0, len(pods))
	for _, p := range pods {
		out = append(out, p.UID)
	}
	slices.Sort(out)
	return out
}
