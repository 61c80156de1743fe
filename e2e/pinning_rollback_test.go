//go:build e2e

package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/confighash/confighash/internal/contract"
	"github.com/confighash/confighash/internal/pinning"
	"github.com/confighash/confighash/internal/waves"
)

// podOf waits for a live pod of ReplicaSet rs and returns the ConfigMap it
// reads.
func podOf(t *testing.T, ns, rs string) string {
	t.Helper()
	p := podsWhere(t, ns, 1, func(p corev1.Pod) bool { return ownerName(p) == rs })[0]
	c, _ := readsOf(t, p)
	return c
}

// undo runs `kubectl rollout undo` of Deployment name, the real kubectl, and
// returns what it printed on stderr (the webhook's warnings).
func undo(t *testing.T, ns, name string) string {
	t.Helper()
	_, warnings := env.Kubectl(t, "", "rollout", "undo", "deployment/"+name, "-n", ns)
	return warnings
}

// annotationOf reads Deployment ns/name's own annotation key.
func annotationOf(t *testing.T, ns, name, key string) string {
	t.Helper()
	d := &appsv1.Deployment{}
	get(t, ns, name, d)
	return d.Annotations[key]
}

// stampStays checks that d's stamp stays want for the whole of dur (an
// undo kept, a change waiting for its window).
func stampStays(t *testing.T, d *appsv1.Deployment, want string, dur time.Duration) {
	t.Helper()
	for end := time.Now().Add(dur); time.Now().Before(end); time.Sleep(time.Second) {
		if got := env.StampOf(t, d); got != want {
			t.Fatalf("%s re-stamped to %s; want %s kept", d.Name, got, want)
		}
	}
}

// pinnedWeb creates, in a pinned app's namespace, Deployment web reading
// configmap/app and secret/db, and waits for its first ReplicaSet: it
// returns the namespace, the pod spec, the Deployment, its stamp and that
// ReplicaSet.
func pinnedWeb(t *testing.T) (ns string, spec corev1.PodSpec, d *appsv1.Deployment, stamp, rs string) {
	t.Helper()
	ns, spec = pinnedApp(t), podSpec("app", "db")
	d = deploymentOf(ns, "web", spec)
	env.Create(t, d)
	return ns, spec, d, env.StampOf(t, d), expectReplicaSets(t, ns, "web", 1)[0]
}

// TestPinningUndoOfAConfigChange: `kubectl rollout undo` of a config-only
// revision of a pinned Deployment goes back to the old ReplicaSet, whose
// new pods read the old snapshots. confighash records a RolledBack halt and
// does not roll it forward by itself, for a minute and across its restart;
// the next change of the ConfigMap (the fix) rolls it forward, once.
func TestPinningUndoOfAConfigChange(t *testing.T) {
	ns, spec, d, stamp1, rs1 := pinnedWeb(t)
	snap1 := podOf(t, ns, rs1)
	if !strings.HasPrefix(snap1, "app-pin-") {
		t.Fatalf("the first revision's pod reads %s, not a snapshot", snap1)
	}

	cm := configMap(ns, "app", nil)
	env.Update(t, cm, func() { cm.Data["k"] = "v2" })
	stamp2 := expectedChecksum(t, ns, &spec, nil)
	waitStamp(t, d, stamp2, 30*time.Second)
	observedReplicaSets(t, ns, "web")
	rs2 := env.CurrentReplicaSet(t, ns, "web")
	if snap2 := podOf(t, ns, rs2); snap2 == snap1 {
		t.Fatalf("the second revision's pod reads the first's snapshot %s", snap1)
	}

	warnings := undo(t, ns, "web")
	if !strings.Contains(warnings, "rolled back") {
		t.Errorf("kubectl did not show the webhook's rollback warning:\n%s", warnings)
	}
	if got := env.StampOf(t, d); got != stamp1 {
		t.Fatalf("after the undo the stamp is %s, want the first revision's %s", got, stamp1)
	}
	if got := observedReplicaSets(t, ns, "web"); len(got) != 2 {
		t.Fatalf("after the undo the Deployment has ReplicaSets %v, want the two it had", got)
	}
	if got := env.CurrentReplicaSet(t, ns, "web"); got != rs1 {
		t.Fatalf("after the undo the Deployment runs %s, want the first ReplicaSet %s", got, rs1)
	}
	// A pod the old ReplicaSet starts now reads the old snapshot.
	before := podsWhere(t, ns, 1, func(p corev1.Pod) bool { return ownerName(p) == rs1 })
	for i := range before {
		_ = env.Client.Delete(env.SpecContext(t), &before[i])
	}
	after := podsWhere(t, ns, 1, func(p corev1.Pod) bool { return ownerName(p) == rs1 && p.Name != before[0].Name })
	if got, _ := readsOf(t, after[0]); got != snap1 {
		t.Fatalf("a pod the old ReplicaSet starts after the undo reads %s, want the old snapshot %s", got, snap1)
	}
	halt, err := contract.ParseHalt(contract.Unsealed(annotationOf(t, ns, "web", contract.HaltAnnotation)))
	if err != nil || halt.Reason != waves.RolledBack || len(halt.Changes) != 2 {
		t.Fatalf("halt after the undo: %+v (%v), want a RolledBack halt naming both sources", halt, err)
	}

	// Not rolled forward by itself: a minute, with a restart of confighash
	// (a new leader that reads the record) half way.
	stampStays(t, d, stamp1, 30*time.Second)
	restartWith(t, "--pinning")
	stampStays(t, d, stamp1, 30*time.Second)
	if len(events(t, ns, "web", contract.ReasonRolledBack)) == 0 {
		t.Error("no RolledBack Event on the Deployment")
	}

	// The fix rolls it forward, once.
	env.Update(t, cm, func() { cm.Data["k"] = "v3" })
	stamp3 := expectedChecksum(t, ns, &spec, nil)
	waitStamp(t, d, stamp3, 30*time.Second)
	expectReplicaSets(t, ns, "web", 3)
	observedReplicaSets(t, ns, "web")
	if got := env.StampOf(t, d); got != stamp3 {
		t.Fatalf("after the fix the stamp is %s, want %s", got, stamp3)
	}
	snap3 := &corev1.ConfigMap{}
	get(t, ns, podOf(t, ns, env.CurrentReplicaSet(t, ns, "web")), snap3)
	if snap3.Data["k"] != "v3" {
		t.Errorf("after the fix the new pod reads %v, want v3", snap3.Data)
	}
	if h := annotationOf(t, ns, "web", contract.HaltAnnotation); h != "" {
		t.Errorf("the rollback's halt is still there after the fix: %q", h)
	}
}

// TestPinningUndoOfAnImageAndConfigChange: the undo of a revision that
// changed the image and the config together goes back to exactly the old
// ReplicaSet, image and stamp, and its pods read the old snapshot.
func TestPinningUndoOfAnImageAndConfigChange(t *testing.T) {
	ns, spec, d, stamp1, rs1 := pinnedWeb(t)
	snap1 := podOf(t, ns, rs1)

	// As a Helm upgrade does: the ConfigMap, then the Deployment's image,
	// stamped together by the webhook in one revision.
	cm := configMap(ns, "app", nil)
	env.Update(t, cm, func() { cm.Data["k"] = "v2" })
	env.Update(t, d, func() { d.Spec.Template.Spec.Containers[0].Image = "registry.k8s.io/pause:3.9" })
	rs2 := expectReplicaSets(t, ns, "web", 2)
	if got := env.StampOf(t, d); got == stamp1 {
		t.Fatalf("the image and config change kept the first stamp")
	}

	undo(t, ns, "web")
	if got := observedReplicaSets(t, ns, "web"); len(got) != 2 {
		t.Fatalf("after the undo the Deployment has ReplicaSets %v, want %v", got, rs2)
	}
	if got := env.StampOf(t, d); got != stamp1 {
		t.Fatalf("after the undo the stamp is %s, want the first revision's %s", got, stamp1)
	}
	if got := env.CurrentReplicaSet(t, ns, "web"); got != rs1 {
		t.Fatalf("after the undo the Deployment runs %s, want the first ReplicaSet %s", got, rs1)
	}
	if img := d.Spec.Template.Spec.Containers[0].Image; img != spec.Containers[0].Image {
		t.Errorf("after the undo the image is %s", img)
	}
	pods := podsWhere(t, ns, 1, func(p corev1.Pod) bool { return ownerName(p) == rs1 })
	if c, _ := readsOf(t, pods[0]); c != snap1 {
		t.Errorf("the old ReplicaSet's pod reads %s, want %s", c, snap1)
	}
	time.Sleep(settle)
	if got := env.StampOf(t, d); got != stamp1 {
		t.Fatalf("re-stamped to %s after the undo", got)
	}
}

// TestPinningCopiedStampOfNoRevisionIsRestamped: a manifest applied with a
// stamp copied from an earlier revision, whose template matches none of
// the live revisions (another image here), is an edit, not a rollback: it
// gets the current content's stamp, as without pinning, and no halt.
func TestPinningCopiedStampOfNoRevisionIsRestamped(t *testing.T) {
	ns, spec, d, stamp1, _ := pinnedWeb(t)
	cm := configMap(ns, "app", nil)
	env.Update(t, cm, func() { cm.Data["k"] = "v2" })
	stamp2 := expectedChecksum(t, ns, &spec, nil)
	waitStamp(t, d, stamp2, 30*time.Second)
	expectReplicaSets(t, ns, "web", 2)

	env.Update(t, d, func() {
		d.Spec.Template.Spec.Containers[0].Image = "registry.k8s.io/pause:3.9"
		d.Spec.Template.Annotations[contract.ChecksumAnnotation] = stamp1
	})
	if got := env.StampOf(t, d); got != stamp2 {
		t.Fatalf("a manifest with a copied stamp of no live revision got %s, want the current content's %s", got, stamp2)
	}
	if h := annotationOf(t, ns, "web", contract.HaltAnnotation); h != "" {
		t.Errorf("an edit recorded a halt: %q", h)
	}
}

// TestUndoKeepsRecords, without pinning: `kubectl rollout undo` replaces a
// Deployment's annotations with its ReplicaSet's copies. A flap hold in
// force survives it, and a stale hold the undo copies back from the
// ReplicaSet made while an earlier hold stood is refused: the Deployment
// does not carry it.
func TestUndoKeepsRecords(t *testing.T) {
	const quiet = 15 * time.Second
	restartWith(t, "--flap-limit=2", "--flap-quiet="+quiet.String())
	f := newFixture(t)
	hold := func() string { return annotationOf(t, f.ns, "app", contract.HoldAnnotation) }

	var held string
	for i := 2; i < 8 && held == ""; i++ {
		f.setCM(t, "flap-"+string(rune('0'+i)))
		_ = wait.PollUntilContextTimeout(env.SpecContext(t), 200*time.Millisecond, 5*time.Second, true, func(context.Context) (bool, error) {
			held = hold()
			return held != "", nil
		})
	}
	if held == "" {
		t.Fatal("no flap hold after six changes with --flap-limit=2")
	}
	// The ReplicaSet of the held stamp copies the hold once the Deployment
	// controller syncs it.
	current := env.CurrentReplicaSet(t, f.ns, "app")
	err := wait.PollUntilContextTimeout(env.SpecContext(t), 200*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
		rs := &appsv1.ReplicaSet{}
		err := env.Client.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: current}, rs)
		return err == nil && rs.Annotations[contract.HoldAnnotation] == held, err
	})
	if err != nil {
		t.Fatalf("the held revision's ReplicaSet %s did not copy the hold: %v", current, err)
	}

	// An undo while held: the hold stays.
	undo(t, f.ns, "app")
	if got := hold(); got != held {
		t.Fatalf("after an undo while held, the hold is %q, want %q", got, held)
	}

	// The hold ends (the last content, once); an undo then goes back to the
	// revision whose ReplicaSet carries the old hold, which is refused.
	ctx := env.SpecContext(t)
	err = wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, quiet+30*time.Second, true, func(context.Context) (bool, error) {
		return hold() == "", nil
	})
	if err != nil {
		t.Fatalf("the hold did not end: %q", hold())
	}
	observedReplicaSets(t, f.ns, "app")
	undo(t, f.ns, "app")
	if got := hold(); got != "" {
		t.Fatalf("after an undo to the held revision the Deployment carries its stale hold %q", got)
	}
}

// TestPinningUndoOfAStatefulSet: a StatefulSet's revisions are its
// ControllerRevisions; kubectl's undo patches the template back from one,
// which the webhook recognises as a rollback (the templates compared on a
// real apiserver, defaults included): the old stamp stays, with the
// RolledBack halt.
func TestPinningUndoOfAStatefulSet(t *testing.T) {
	ns := pinnedApp(t)
	spec := podSpec("app", "db")
	s := &appsv1.StatefulSet{}
	s.Namespace, s.Name = ns, "db"
	s.Spec.ServiceName = "db"
	s.Spec.Selector = deploymentOf(ns, "db", spec).Spec.Selector
	s.Spec.Template = template(spec)
	env.Create(t, s)
	stamp1 := env.StampOf(t, s)
	if p := podsWhere(t, ns, 1, func(corev1.Pod) bool { return true })[0]; p.Annotations[pinning.PodAnnotation] != "true" {
		t.Fatalf("the first revision's pod is not pinned: %q", p.Annotations[pinning.PodAnnotation])
	}
	cm := configMap(ns, "app", nil)
	env.Update(t, cm, func() { cm.Data["k"] = "v2" })
	waitStamp(t, s, expectedChecksum(t, ns, &spec, nil), 30*time.Second)
	err := wait.PollUntilContextTimeout(env.SpecContext(t), 200*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		var l appsv1.ControllerRevisionList
		err := env.Client.List(ctx, &l, client.InNamespace(ns))
		return len(l.Items) == 2, err
	})
	if err != nil {
		t.Fatalf("the StatefulSet has no second revision: %v", err)
	}

	env.Kubectl(t, "", "rollout", "undo", "statefulset/db", "-n", ns)
	if got := env.StampOf(t, s); got != stamp1 {
		t.Fatalf("after the undo the stamp is %s, want the first revision's %s", got, stamp1)
	}
	halt, err := contract.ParseHalt(contract.Unsealed(s.Annotations[contract.HaltAnnotation]))
	if err != nil || halt.Reason != waves.RolledBack {
		t.Fatalf("halt after the undo: %+v (%v)", halt, err)
	}
	time.Sleep(settle)
	if got := env.StampOf(t, s); got != stamp1 {
		t.Fatalf("re-stamped to %s after the undo", got)
	}
}
