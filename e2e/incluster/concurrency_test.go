//go:build e2e

package incluster

import (
	"context"
	"fmt"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/confighash/confighash/e2e/framework"
	"github.com/confighash/confighash/e2e/images"
	"github.com/confighash/confighash/internal/contract"
)

// withConfighashArgs runs the in-cluster confighash with extra flags for
// one spec: its Deployment's args, then back as they were.
func withConfighashArgs(t *testing.T, args ...string) {
	t.Helper()
	ctx := env.SpecContext(t)
	key := client.ObjectKey{Namespace: framework.Namespace, Name: "confighash"}
	d := &appsv1.Deployment{}
	if err := env.Client.Get(ctx, key, d); err != nil {
		t.Fatal(err)
	}
	orig := slices.Clone(d.Spec.Template.Spec.Containers[0].Args)
	set := func(ctx context.Context, a []string) error {
		d := &appsv1.Deployment{}
		if err := env.Client.Get(ctx, key, d); err != nil {
			return err
		}
		base := client.MergeFrom(d.DeepCopy())
		d.Spec.Template.Spec.Containers[0].Args = a
		if err := env.Client.Patch(ctx, d, base); err != nil {
			return err
		}
		if err := env.WaitRollout(ctx, framework.Namespace, "confighash", 3*time.Minute); err != nil {
			return err
		}
		// The old leader released the Lease as it stopped: wait for a new
		// pod to hold it, so that the next spec finds a leader.
		return wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
			holder, err := leader(ctx)
			if err != nil {
				return false, nil //nolint:nilerr // the Lease may be changing hands
			}
			for _, p := range confighashPods(t) {
				if p.Name == holder {
					return true, nil
				}
			}
			return false, nil
		})
	}
	if err := set(ctx, append(slices.Clone(orig), args...)); err != nil {
		t.Fatalf("running confighash with %v: %v", args, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		if err := set(ctx, orig); err != nil {
			t.Errorf("restoring confighash's args: %v", err)
		}
	})
}

// plainReader is a one-replica Deployment of the sample app reading key v
// of ConfigMap cm.
func plainReader(ns, name, cm string) *appsv1.Deployment {
	return deployment(ns, name, 1, corev1.PodSpec{Containers: []corev1.Container{{
		Name: "app", Image: images.SampleApp().Ref, Args: []string{"-env", "V"},
		Env: []corev1.EnvVar{{Name: "V", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: cm}, Key: "v"}}}},
	}}})
}

// rolling reports whether a Deployment's status says a rollout is in
// progress, as `kubectl rollout status` would wait for it.
func rolling(d *appsv1.Deployment) bool {
	want := int32(1)
	if d.Spec.Replicas != nil {
		want = *d.Spec.Replicas
	}
	s := d.Status
	return s.ObservedGeneration < d.Generation || s.UpdatedReplicas < want || s.Replicas > want || s.AvailableReplicas < want
}

// rollAndWatch changes cm's v and polls every reader's status until each has
// a new stamp and has rolled out, and returns the time that took and the
// most readers seen rolling at once.
func rollAndWatch(t *testing.T, cm *corev1.ConfigMap, ds []*appsv1.Deployment) (time.Duration, int) {
	t.Helper()
	ctx := env.SpecContext(t)
	before := map[string]string{}
	for _, d := range ds {
		before[d.Name] = env.StampOf(t, d)
	}
	start := time.Now()
	env.Update(t, cm, func() { cm.Data["v"] = cm.Data["v"] + "+" })
	peak := 0
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 5*time.Minute, true, func(ctx context.Context) (bool, error) {
		n, done := 0, 0
		for _, d := range ds {
			got := &appsv1.Deployment{}
			if err := env.Client.Get(ctx, client.ObjectKeyFromObject(d), got); err != nil {
				return false, err
			}
			r := rolling(got)
			if r {
				n++
			}
			if !r && got.Spec.Template.Annotations[contract.ChecksumAnnotation] != before[d.Name] {
				done++
			}
		}
		peak = max(peak, n)
		return done == len(ds), nil
	})
	if err != nil {
		t.Fatalf("not every reader of %s rolled out: %v", cm.Name, err)
	}
	return time.Since(start), peak
}

// twelveReaders makes a ConfigMap and 12 readers of it, rolled out.
func twelveReaders(t *testing.T, ns, cmName string, annotations map[string]string) (*corev1.ConfigMap, []*appsv1.Deployment) {
	t.Helper()
	cm := &corev1.ConfigMap{}
	cm.Namespace, cm.Name, cm.Data, cm.Annotations = ns, cmName, map[string]string{"v": "1"}, annotations
	env.Create(t, cm)
	var ds []*appsv1.Deployment
	var wg sync.WaitGroup
	for i := range 12 {
		d := plainReader(ns, fmt.Sprintf("%s-%02d", cmName, i), cmName)
		env.Create(t, d)
		ds = append(ds, d)
		wg.Go(func() {
			if err := env.WaitRollout(env.SpecContext(t), ns, d.Name, 3*time.Minute); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	return cm, ds
}

// TestMaxConcurrentRollouts: with --max-concurrent-rollouts=3, never more
// than 3 of 12 readers of one change are rolling at once, as their own
// status shows it; every reader rolls once.
func TestMaxConcurrentRollouts(t *testing.T) {
	withConfighashArgs(t, "--max-concurrent-rollouts=3")
	ns := env.NewNamespace(t, true)
	cm, ds := twelveReaders(t, ns, "bounded", nil)
	took, peak := rollAndWatch(t, cm, ds)
	t.Logf("12 readers with --max-concurrent-rollouts=3: all rolled out in %s, at most %d rolling at once", took.Round(100*time.Millisecond), peak)
	if peak > 3 {
		t.Errorf("%d readers rolling at once, want at most 3", peak)
	}
	if peak == 0 {
		t.Error("no reader was ever seen rolling: the spec measures nothing")
	}
	for _, d := range ds {
		if n := len(env.ReplicaSets(t, ns, d.Name)); n != 2 {
			t.Errorf("%s: %d ReplicaSets, want 2 (one rollout)", d.Name, n)
		}
	}
}

// TestBenchWavesOnTheNode (CONFIGHASH_BENCH=1, make bench): 12 one-replica
// readers in waves against 12 of a ConfigMap with waves off, in the same
// run: how long each change takes to reach all of them, and how many roll
// at once.
func TestBenchWavesOnTheNode(t *testing.T) {
	if os.Getenv("CONFIGHASH_BENCH") == "" {
		t.Skip("a figure, not a check: set CONFIGHASH_BENCH=1 (make bench)")
	}
	ns := env.NewNamespace(t, true)
	wcm, wds := twelveReaders(t, ns, "waves", nil)
	acm, ads := twelveReaders(t, ns, "atonce", map[string]string{contract.WavesAnnotation: contract.WavesOff})
	wTook, wPeak := rollAndWatch(t, wcm, wds)
	aTook, aPeak := rollAndWatch(t, acm, ads)
	fmt.Printf("\n| 12 one-replica readers on the node | change to all rolled out | most rolling at once |\n|---|---|---|\n")
	fmt.Printf("| in waves (defaults: 1, 2, 4, 5; soak 10 s) | %s | %d |\n", wTook.Round(100*time.Millisecond), wPeak)
	fmt.Printf("| all at once (%s=%s) | %s | %d |\n", contract.WavesAnnotation, contract.WavesOff, aTook.Round(100*time.Millisecond), aPeak)
}
