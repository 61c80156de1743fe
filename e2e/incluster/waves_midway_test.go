//go:build e2e

package incluster

import (
	"slices"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/confighash/confighash/internal/contract"
)

// canaryHold is how long each rollout of the slow canary lasts at least:
// its new pod counts as available only once it has been ready this long
// (minReadySeconds), and the next wave waits for that and the soak (10 s,
// the shipped default the node's confighash runs with, waves on).
const canaryHold = 25 * time.Second

// midWavesOnTheNode is a change of configmap/shared whose canary is still
// rolling: readers wait behind it, each on the ReplicaSet it was created
// with.
type midWavesOnTheNode struct {
	cm      *corev1.ConfigMap
	canary  *appsv1.Deployment
	readers []*appsv1.Deployment
	created string            // the readers' stamp before the change
	first   map[string]string // each reader's ReplicaSet before the change
}

// startMidWaves makes configmap/shared (v=1), a slow canary ordered first
// and one-replica readers of names, all rolled out; then changes v to 2 and
// waits until the canary, alone, has been re-stamped and is rolling.
func startMidWaves(t *testing.T, names ...string) *midWavesOnTheNode {
	t.Helper()
	ns := env.NewNamespace(t, true)
	m := &midWavesOnTheNode{cm: &corev1.ConfigMap{}, first: map[string]string{}}
	m.cm.Namespace, m.cm.Name, m.cm.Data = ns, "shared", map[string]string{"v": "1"}
	env.Create(t, m.cm)
	m.canary = plainReader(ns, "canary", "shared")
	m.canary.Annotations = map[string]string{contract.RolloutOrderAnnotation: "-1"}
	m.canary.Spec.MinReadySeconds = int32(canaryHold / time.Second)
	env.Create(t, m.canary)
	for _, n := range names {
		d := plainReader(ns, n, "shared")
		env.Create(t, d)
		m.readers = append(m.readers, d)
	}
	var wg sync.WaitGroup
	for _, d := range append([]*appsv1.Deployment{m.canary}, m.readers...) {
		wg.Go(func() {
			if err := env.WaitRollout(env.SpecContext(t), ns, d.Name, 3*time.Minute); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	m.created = env.StampOf(t, m.canary)
	for _, d := range m.readers {
		if s := env.StampOf(t, d); s != m.created {
			t.Fatalf("%s stamped %q at creation, the canary %q: the readers read the same key", d.Name, s, m.created)
		}
		m.first[d.Name] = env.CurrentReplicaSet(t, ns, d.Name)
	}
	canaryFirst := env.CurrentReplicaSet(t, ns, m.canary.Name)

	env.Update(t, m.cm, func() { m.cm.Data["v"] = "2" })
	waitNewReplicaSet(t, m.canary, canaryFirst)
	m.expectWaiting(t, "while the canary of the first change was rolling")
	return m
}

// expectWaiting checks, after the settle time, that the canary is still
// rolling (else the spec would prove nothing) and that every reader but
// the skipped ones keeps its stamp and its one ReplicaSet.
func (m *midWavesOnTheNode) expectWaiting(t *testing.T, why string, skip ...*appsv1.Deployment) {
	t.Helper()
	time.Sleep(settle)
	c := &appsv1.Deployment{}
	if err := env.Client.Get(env.SpecContext(t), client.ObjectKeyFromObject(m.canary), c); err != nil {
		t.Fatal(err)
	}
	if !rolling(c) {
		t.Fatalf("the canary's rollout ended %s: canaryHold (%s) is too short for this machine", why, canaryHold)
	}
	for _, d := range m.readers {
		if slices.Contains(skip, d) {
			continue
		}
		if s := env.StampOf(t, d); s != m.created {
			t.Errorf("%s was re-stamped %s", d.Name, why)
		}
		if rs := env.ReplicaSets(t, d.Namespace, d.Name); len(rs) != 1 || rs[0].Name != m.first[d.Name] {
			t.Errorf("%s has %d ReplicaSets %s, want only %s", d.Name, len(rs), why, m.first[d.Name])
		}
	}
}

// expectRolledOut waits for each Deployment's rollout, and checks, once the
// settle time has passed, its count of ReplicaSets and what its pod prints.
func expectRolledOut(t *testing.T, want map[*appsv1.Deployment]int, prints map[*appsv1.Deployment][]string) {
	t.Helper()
	ctx := env.SpecContext(t)
	for d := range want {
		if err := env.WaitRollout(ctx, d.Namespace, d.Name, 2*time.Minute); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(settle)
	for d, n := range want {
		if rs := env.ReplicaSets(t, d.Namespace, d.Name); len(rs) != n {
			t.Errorf("%s: %d ReplicaSets, want %d", d.Name, len(rs), n)
		}
		pod, _ := runningPod(t, d.Namespace, env.CurrentReplicaSet(t, d.Namespace, d.Name))
		got := podLog(t, d.Namespace, pod, len(prints[d]))
		for _, line := range prints[d] {
			if !slices.Contains(got, line) {
				t.Errorf("%s's pod %s printed %q, want %s", d.Name, pod, got, line)
			}
		}
	}
}

// TestWavesSupersedeOnTheNode: a second change comes while the canary of
// the first is still rolling. The canary rolls once more, to the second
// content; the readers behind it keep their pods until it has, then go
// straight to the second content: one rollout each, and their new pods
// print it.
func TestWavesSupersedeOnTheNode(t *testing.T) {
	start := time.Now()
	m := startMidWaves(t, "a", "b")
	canaryFirst := env.CurrentReplicaSet(t, m.canary.Namespace, m.canary.Name)

	changed := time.Now()
	env.Update(t, m.cm, func() { m.cm.Data["v"] = "3" })
	waitNewReplicaSet(t, m.canary, canaryFirst)
	m.expectWaiting(t, "while the canary of the second change was rolling")
	second := env.StampOf(t, m.canary)
	if second == m.created {
		t.Fatal("the canary's stamp is its stamp at creation")
	}

	if err := env.WaitRollout(env.SpecContext(t), m.canary.Namespace, m.canary.Name, 2*time.Minute); err != nil {
		t.Fatal(err)
	}
	for _, d := range m.readers {
		waitNewReplicaSet(t, d, m.first[d.Name])
		if s := env.StampOf(t, d); s != second {
			t.Errorf("%s re-stamped %q, want the second content's %q", d.Name, s, second)
		}
	}
	// Created, the first content, the second; the others: created, the
	// second.
	want := map[*appsv1.Deployment]int{m.canary: 3}
	prints := map[*appsv1.Deployment][]string{m.canary: {"env:V=3"}}
	for _, d := range m.readers {
		want[d], prints[d] = 2, []string{"env:V=3"}
	}
	expectRolledOut(t, want, prints)
	t.Logf("every reader rolled out on the second change %s after it; spec %s",
		time.Since(changed).Round(time.Second), time.Since(start).Round(time.Second))
}

// TestWavesTemplateChangeOnTheNode: a reader waiting behind the canary has
// its own template changed. The webhook stamps it with the current content
// at once, so it rolls then, to the new content; when its wave comes it is
// current and does not roll again. The reader beside it, untouched, keeps
// its pod until its wave, then rolls once.
func TestWavesTemplateChangeOnTheNode(t *testing.T) {
	start := time.Now()
	m := startMidWaves(t, "edited", "untouched")
	edited, untouched := m.readers[0], m.readers[1]
	current := env.StampOf(t, m.canary)

	env.Update(t, edited, func() {
		c := &edited.Spec.Template.Spec.Containers[0]
		c.Args = append(c.Args, "-env", "EDITED")
		c.Env = append(c.Env, corev1.EnvVar{Name: "EDITED", Value: "yes"})
	})
	if s := env.StampOf(t, edited); s != current {
		t.Fatalf("edited mid-waves: stamp %q, want the current content's %q", s, current)
	}
	editedRS := waitNewReplicaSet(t, edited, m.first[edited.Name])
	if err := env.WaitRollout(env.SpecContext(t), edited.Namespace, edited.Name, 2*time.Minute); err != nil {
		t.Fatal(err)
	}
	m.expectWaiting(t, "while the canary was rolling", edited)

	if err := env.WaitRollout(env.SpecContext(t), m.canary.Namespace, m.canary.Name, 2*time.Minute); err != nil {
		t.Fatal(err)
	}
	waitNewReplicaSet(t, untouched, m.first[untouched.Name])
	if s := env.StampOf(t, untouched); s != current {
		t.Errorf("untouched re-stamped %q, want %q", s, current)
	}
	// Each rolled once: the canary and untouched re-stamped, edited by its
	// own template change.
	expectRolledOut(t, map[*appsv1.Deployment]int{m.canary: 2, edited: 2, untouched: 2},
		map[*appsv1.Deployment][]string{m.canary: {"env:V=2"}, edited: {"env:V=2", "env:EDITED=yes"}, untouched: {"env:V=2"}})
	if rs := env.CurrentReplicaSet(t, edited.Namespace, edited.Name); rs != editedRS {
		t.Errorf("edited moved from ReplicaSet %s to %s when its wave came", editedRS, rs)
	}
	t.Logf("spec %s", time.Since(start).Round(time.Second))
}
