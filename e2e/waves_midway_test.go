//go:build e2e

package e2e

import (
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/confighash/confighash/internal/contract"
)

// stuckCanary is a one-replica reader ordered first: on a control plane
// without a node its pods never run, so its rollout neither succeeds nor
// fails (the default progress deadline is 10 minutes) until the spec
// scales it to 0 (succeed).
func stuckCanary(t *testing.T, ns string) *appsv1.Deployment {
	t.Helper()
	d := waveReader(ns, "canary", 1)
	d.Annotations = map[string]string{contract.RolloutOrderAnnotation: "-1"}
	env.Create(t, d)
	return d
}

// succeed ends the canary's rollout with success: with 0 replicas the
// Deployment controller reports it complete at once.
func succeed(t *testing.T, d *appsv1.Deployment) {
	t.Helper()
	env.Update(t, d, func() { d.Spec.Replicas = ptr.To[int32](0) })
}

// generationOf reads obj's metadata.generation: each template change (and
// so each re-stamp) of a DaemonSet adds one.
func generationOf(t *testing.T, ds *appsv1.DaemonSet) int64 {
	t.Helper()
	env.StampOf(t, ds) // reads ds afresh
	return ds.Generation
}

// expectKept fails if any of ds has a stamp other than its before one, for
// the settle time.
func expectKept(t *testing.T, before map[string]string, why string, ds ...*appsv1.DaemonSet) {
	t.Helper()
	time.Sleep(settle)
	for _, d := range ds {
		if got := env.StampOf(t, d); got != before[d.Name] {
			t.Errorf("%s was re-stamped %s", d.Name, why)
		}
	}
}

// midWaves starts confighash with waves on, makes configmap/shared, the
// stuck canary and DaemonSets of names behind it, changes the ConfigMap
// once, and waits until the canary has that content while the DaemonSets
// keep their stamps (returned by name).
func midWaves(t *testing.T, names ...string) (*corev1.ConfigMap, *appsv1.Deployment, []*appsv1.DaemonSet, map[string]string) {
	t.Helper()
	restartWith(t, "--max-wave-size=4", "--rollout-soak=0s")
	ns := env.NewNamespace(t, true)
	cm := configMap(ns, "shared", map[string]string{"v": "1"})
	env.Create(t, cm)
	canary := stuckCanary(t, ns)
	before := map[string]string{}
	var ds []*appsv1.DaemonSet
	for _, n := range names {
		d := waveDaemonSet(ns, n)
		env.Create(t, d)
		ds = append(ds, d)
		before[n] = env.StampOf(t, d)
	}
	env.Update(t, cm, func() { cm.Data["v"] = "2" })
	waitStamp(t, canary, expectedChecksum(t, ns, &canary.Spec.Template.Spec, nil), 30*time.Second)
	expectKept(t, before, "while the canary of the first change was rolling", ds...)
	return cm, canary, ds, before
}

// TestWavesNewerContentSupersedes: a second change comes while the waves
// of the first are going. The canary, already on the first content, rolls
// once more, to the second; the readers behind it, not yet rolled, wait,
// and then go straight to the second content: one re-stamp each.
func TestWavesNewerContentSupersedes(t *testing.T) {
	cm, canary, ds, before := midWaves(t, "a", "b")
	a, b := ds[0], ds[1]
	ns := cm.Namespace

	env.Update(t, cm, func() { cm.Data["v"] = "3" })
	second := expectedChecksum(t, ns, &canary.Spec.Template.Spec, nil)
	waitStamp(t, canary, second, 30*time.Second)
	expectKept(t, before, "while the canary of the second change was rolling", a, b)

	succeed(t, canary)
	for _, d := range []*appsv1.DaemonSet{a, b} {
		waitStamp(t, d, expectedChecksum(t, ns, &d.Spec.Template.Spec, nil), 30*time.Second)
	}
	time.Sleep(settle)
	for _, d := range []*appsv1.DaemonSet{a, b} {
		if g := generationOf(t, d); g != 2 {
			t.Errorf("%s: generation %d, want 2 (created, then re-stamped once, straight to the second content)", d.Name, g)
		}
	}
	// Created, the first content, the second: the scale to 0 is no revision.
	expectRevision(t, ns, canary.Name, 3)
}

// TestWavesReaderTemplateChangeMidWaves: a reader waiting for its wave has
// its own template changed. The webhook stamps it with the current
// content, so that rollout, which its owner asked for, carries the change
// too; when its wave comes it is current and is not re-stamped again. The
// reader beside it, untouched, waits and is re-stamped once. A reader
// created meanwhile is stamped with the current content at once (the
// webhook's CREATE path knows no waves) and is never re-stamped.
func TestWavesReaderTemplateChangeMidWaves(t *testing.T) {
	cm, canary, ds, before := midWaves(t, "edited", "untouched")
	edited, untouched := ds[0], ds[1]
	ns := cm.Namespace

	env.Update(t, edited, func() {
		c := &edited.Spec.Template.Spec.Containers[0]
		c.Env = append(c.Env, corev1.EnvVar{Name: "EDITED", Value: "yes"})
	})
	if got, want := env.StampOf(t, edited), expectedChecksum(t, ns, &edited.Spec.Template.Spec, nil); got != want {
		t.Fatalf("edited mid-waves: stamp %q, want %q (the current content)", got, want)
	}
	created := waveDaemonSet(ns, "created")
	env.Create(t, created)
	if got, want := env.StampOf(t, created), expectedChecksum(t, ns, &created.Spec.Template.Spec, nil); got != want {
		t.Fatalf("created mid-waves: stamp %q, want %q (the current content)", got, want)
	}
	expectKept(t, before, "while the canary was rolling", untouched)

	succeed(t, canary)
	waitStamp(t, untouched, expectedChecksum(t, ns, &untouched.Spec.Template.Spec, nil), 30*time.Second)
	time.Sleep(settle)
	for _, d := range []*appsv1.DaemonSet{edited, untouched} {
		if g := generationOf(t, d); g != 2 {
			t.Errorf("%s: generation %d, want 2 (one template change each)", d.Name, g)
		}
	}
	if g := generationOf(t, created); g != 1 {
		t.Errorf("created mid-waves: generation %d, want 1 (stamped at creation, never re-stamped)", g)
	}
}
