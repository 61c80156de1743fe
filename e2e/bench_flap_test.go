//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/confighash/confighash/cmd/confighash/app"
	"github.com/confighash/confighash/internal/contract"
)

// TestBenchFlapHold measures the flap hold with waves on and every hook
// flag at its default, as shipped (the harness turns waves off), on the two cases the
// default must tell apart, side by side in one run:
//   - a machine: a Secret flipped between two values every 2 s for 2
//     minutes, as a broken operator or a duelling pair of controllers does;
//   - a person: ten edits of a ConfigMap a minute apart, each made once the
//     previous rollout has finished.
//
// Each has one reader, a DaemonSet (no node: its rollout ends as soon as its
// controller has observed it). It reports the re-stamps each got, and when
// the hold began and ended. It takes about 10 minutes.
func TestBenchFlapHold(t *testing.T) {
	benchOnly(t)
	o := app.DefaultOptions().Hook
	restartWith(t, fmt.Sprintf("--max-wave-size=%d", o.MaxWaveSize))
	fmt.Printf("\nflap hold, defaults (--flap-limit=%d --flap-window=%s --flap-quiet=%s), waves on\nmachine: %s\n\n",
		o.FlapLimit, o.FlapWindow, o.FlapQuiet, machine())
	fmt.Printf("| case | changes | re-stamps | held | hold began | hold ended |\n|---|---|---|---|---|---|\n")
	var wg sync.WaitGroup
	var rows [2]string
	wg.Go(func() { rows[0] = benchFlapMachine(t) })
	wg.Go(func() { rows[1] = benchFlapPerson(t) })
	wg.Wait()
	for _, r := range rows {
		fmt.Println(r)
	}
}

// flapReader is one DaemonSet reading every key of src in a namespace of
// its own, and a record of what happens to it.
type flapReader struct {
	ds      *appsv1.DaemonSet
	started time.Time
	// holdBegan and holdEnded are when a look first saw the hold and then
	// saw it gone, from started; -1 until then.
	holdBegan, holdEnded time.Duration
}

func newFlapReader(t *testing.T, ns string, from corev1.EnvFromSource) *flapReader {
	spec := corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "registry.k8s.io/pause:3.10", EnvFrom: []corev1.EnvFromSource{from}}}}
	ds := nodelessDaemonSets().make(ns, "reader", spec).(*appsv1.DaemonSet)
	env.Create(t, ds)
	return &flapReader{ds: ds, holdBegan: -1, holdEnded: -1}
}

// look reads the reader afresh and notes when its hold began and ended.
func (r *flapReader) look(t *testing.T) (restamps int64, held bool) {
	got := &appsv1.DaemonSet{}
	if err := env.Client.Get(env.SpecContext(t), client.ObjectKeyFromObject(r.ds), got); err != nil {
		t.Error(err)
		return 0, false
	}
	_, held = got.Annotations[contract.HoldAnnotation]
	switch {
	case held && r.holdBegan < 0:
		r.holdBegan = time.Since(r.started)
	case !held && r.holdBegan >= 0 && r.holdEnded < 0:
		r.holdEnded = time.Since(r.started)
	}
	r.ds = got
	return got.Generation - 1, held
}

// finished: the DaemonSet controller has observed the reader's template.
func (r *flapReader) finished() bool { return r.ds.Status.ObservedGeneration == r.ds.Generation }

func (r *flapReader) row(what string, changes int, restamps int64) string {
	at := func(d time.Duration) string {
		if d < 0 {
			return "–"
		}
		return fmt.Sprintf("%.0f s after the first change", d.Seconds())
	}
	return fmt.Sprintf("| %s | %d | %d | %v | %s | %s |", what, changes, restamps, r.holdBegan >= 0, at(r.holdBegan), at(r.holdEnded))
}

func benchFlapMachine(t *testing.T) string {
	ns := env.NewNamespace(t, true)
	s := secret(ns, "flipped", map[string]string{"token": "a"})
	env.Create(t, s)
	r := newFlapReader(t, ns, corev1.EnvFromSource{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "flipped"}}})
	const period, flipFor = 2 * time.Second, 2 * time.Minute
	r.started = time.Now()
	flips := 0
	for next := r.started; time.Since(r.started) < flipFor; next = next.Add(period) {
		time.Sleep(time.Until(next))
		flips++
		v := "b"
		if flips%2 == 0 {
			v = "a"
		}
		env.Update(t, s, func() { s.StringData = nil; s.Data = map[string][]byte{"token": []byte(v)} })
		r.look(t)
	}
	// Then quiet: the hold, if any, ends a quiet time after the last flip.
	want := expectedChecksum(t, ns, &r.ds.Spec.Template.Spec, nil)
	_ = wait.PollUntilContextTimeout(env.SpecContext(t), time.Second, 5*time.Minute, true, func(context.Context) (bool, error) {
		_, held := r.look(t)
		return !held && r.ds.Spec.Template.Annotations[contract.ChecksumAnnotation] == want, nil
	})
	n, _ := r.look(t)
	if r.ds.Spec.Template.Annotations[contract.ChecksumAnnotation] != want {
		t.Errorf("machine: the reader did not end on the last content")
	}
	return r.row("machine: a Secret flipped a↔b every 2 s for 2 min", flips, n)
}

func benchFlapPerson(t *testing.T) string {
	ns := env.NewNamespace(t, true)
	cm := configMap(ns, "edited", map[string]string{"greeting": "v0"})
	env.Create(t, cm)
	r := newFlapReader(t, ns, corev1.EnvFromSource{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "edited"}}})
	const edits, apart = 10, time.Minute
	r.started = time.Now()
	for i := 1; i <= edits; i++ {
		if i > 1 {
			time.Sleep(time.Until(r.started.Add(time.Duration(i-1) * apart)))
		}
		env.Update(t, cm, func() { cm.Data["greeting"] = fmt.Sprintf("v%d", i) })
		// Waited for until its rollout appeared and finished.
		err := wait.PollUntilContextTimeout(env.SpecContext(t), 200*time.Millisecond, 50*time.Second, true, func(context.Context) (bool, error) {
			n, held := r.look(t)
			return held || n >= int64(i) && r.finished(), nil
		})
		if err != nil {
			t.Errorf("person: edit %d did not roll within 50 s", i)
		}
	}
	time.Sleep(settle)
	n, _ := r.look(t)
	if r.holdBegan >= 0 || n != edits {
		t.Errorf("person: %d re-stamps for %d edits, held %v; want one each, never held", n, edits, r.holdBegan >= 0)
	}
	return r.row("person: a ConfigMap edited 10 times a minute apart", edits, n)
}
