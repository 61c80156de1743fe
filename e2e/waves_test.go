//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/confighash/confighash/internal/contract"
)

// waveReader is a Deployment of its own selector reading configmap/shared.
func waveReader(ns, name string, replicas int32) *appsv1.Deployment {
	d := deploymentOf(ns, name, corev1.PodSpec{Containers: []corev1.Container{{
		Name: "app", Image: "registry.k8s.io/pause:3.10",
		EnvFrom: []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "shared"}}}},
	}}})
	d.Spec.Replicas = ptr.To(replicas)
	d.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}}
	d.Spec.Template.Labels = map[string]string{"app": name}
	return d
}

// sharedConfig creates configmap/shared, which wave readers read, holding
// v=1.
func sharedConfig(t *testing.T, ns string) *corev1.ConfigMap {
	t.Helper()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "shared"}, Data: map[string]string{"v": "1"}}
	env.Create(t, cm)
	return cm
}

// waveReaders creates n wave readers of one replica, r0 to r<n-1>.
func waveReaders(t *testing.T, ns string, n int) []*appsv1.Deployment {
	t.Helper()
	var ds []*appsv1.Deployment
	for i := range n {
		d := waveReader(ns, fmt.Sprintf("r%d", i), 1)
		env.Create(t, d)
		ds = append(ds, d)
	}
	return ds
}

// waveDaemonSet is a DaemonSet reading configmap/shared. On a control plane
// without a node it schedules no pod, so its rollout ends as soon as the
// DaemonSet controller has observed it, yet it is no reader that "starts no
// pod" by its spec (health.NothingToRun): it goes in the waves.
func waveDaemonSet(ns, name string) *appsv1.DaemonSet {
	return nodelessDaemonSets().make(ns, name, waveReader(ns, name, 0).Spec.Template.Spec).(*appsv1.DaemonSet)
}

// TestWavesGoInOrder: five DaemonSets (whose rollouts end as soon as their
// controller has seen them) in waves of at most 2, and a Deployment of 0
// replicas. The DaemonSet ordered first goes first, alone; the Deployment,
// which starts no pod, is in no wave and is re-stamped at once, ahead of
// the waves' last readers. Every reader is re-stamped once, with its
// rollout record.
func TestWavesGoInOrder(t *testing.T) {
	restartWith(t, "--max-wave-size=2", "--rollout-soak=0s")
	ns := env.NewNamespace(t, true)
	cm := sharedConfig(t, ns)
	names := []string{"a", "b", "c", "d", "staging"}
	var objs []client.Object
	for _, n := range names {
		d := waveDaemonSet(ns, n)
		if n == "staging" {
			d.Annotations = map[string]string{contract.RolloutOrderAnnotation: "-1"}
		}
		env.Create(t, d)
		objs = append(objs, d)
	}
	idle := waveReader(ns, "idle", 0)
	idle.Annotations = map[string]string{contract.RolloutOrderAnnotation: "10"}
	env.Create(t, idle)
	objs = append(objs, idle)
	before := map[string]string{}
	for _, o := range objs {
		before[o.GetName()] = env.StampOf(t, o)
	}
	env.Update(t, cm, func() { cm.Data["v"] = "2" })
	var order []string
	err := wait.PollUntilContextTimeout(env.SpecContext(t), 20*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		for _, o := range objs {
			if !slices.Contains(order, o.GetName()) && env.StampOf(t, o) != before[o.GetName()] {
				order = append(order, o.GetName())
			}
		}
		return len(order) == len(objs), nil
	})
	if err != nil {
		t.Fatalf("re-stamped %v of %v and idle", order, names)
	}
	t.Logf("re-stamped in the order %v", order)
	if i := slices.Index(order, "staging"); i < 0 || slices.ContainsFunc(order[:i], func(n string) bool { return n != "idle" }) {
		t.Errorf("re-stamped %v: staging (%s: -1) must be the first DaemonSet", order, contract.RolloutOrderAnnotation)
	}
	if i := slices.Index(order, "idle"); i >= len(order)-2 {
		t.Errorf("re-stamped %v: idle (0 replicas, order 10) waited for the waves", order)
	}
	for _, o := range objs {
		got := o.DeepCopyObject().(client.Object)
		if err := env.Client.Get(env.SpecContext(t), client.ObjectKeyFromObject(o), got); err != nil {
			t.Fatal(err)
		}
		rec, err := contract.ParseRollout(got.GetAnnotations()[contract.RolloutAnnotation])
		if err != nil || len(rec.Changes) != 1 || rec.Changes[0].Source != "configmap/shared" {
			t.Errorf("%s: rollout record %q: %v", o.GetName(), got.GetAnnotations()[contract.RolloutAnnotation], err)
		}
	}
	expectRevision(t, ns, idle.Name, 2)
}

// TestWavesHaltAtTheRolloutTimeout: on a control plane without a node no
// pod starts, so a reader of one replica never rolls out. Before the change
// its first rollout is still within its progress deadline, so it counts as
// healthy (a reader failing before a change would be neither canary nor
// evidence); after it, --rollout-timeout fails the canary's rollout, which
// halts the change: the other readers keep their stamp, and RolloutHalted
// is on the canary and the ConfigMap.
func TestWavesHaltAtTheRolloutTimeout(t *testing.T) {
	restartWith(t, "--max-wave-size=4", "--rollout-timeout=3s")
	ns := env.NewNamespace(t, true)
	cm := sharedConfig(t, ns)
	ds := waveReaders(t, ns, 3)
	before := env.StampOf(t, ds[0])
	env.Update(t, cm, func() { cm.Data["v"] = "2" })
	halted := waitHalted(t, ds[0])
	h, err := contract.ParseHalt(halted)
	if err != nil || h.Reason != "RolloutTimeout" {
		t.Fatalf("halt %q: %+v %v", halted, h, err)
	}
	time.Sleep(3 * time.Second)
	for _, d := range ds[1:] {
		if env.StampOf(t, d) != before {
			t.Errorf("%s was re-stamped although the change was halted", d.Name)
		}
	}
	for _, name := range []string{"r0", "shared"} {
		evs := events(t, ns, name, contract.ReasonRolloutHalted)
		if len(evs) == 0 || evs[0].Type != corev1.EventTypeWarning {
			t.Errorf("no RolloutHalted warning on %s: %v", name, evs)
		}
	}

	// A restart (a new leader) keeps the halt: it reads it from r0.
	stopConfighash(t)
	if err := env.Confighash.Start(env.SpecContext(t), "--max-wave-size=4"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Confighash.Stop(context.Background()) })
	time.Sleep(5 * time.Second)
	for _, d := range ds[1:] {
		if env.StampOf(t, d) != before {
			t.Errorf("%s was re-stamped after a restart although the change was halted", d.Name)
		}
	}

	// Waves off on the source pushes the halted change to every reader.
	env.Update(t, cm, func() { cm.Annotations = map[string]string{contract.WavesAnnotation: contract.WavesOff} })
	err = wait.PollUntilContextTimeout(env.SpecContext(t), 200*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		for _, d := range ds[1:] {
			if env.StampOf(t, d) == before {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		t.Fatalf("%s=%s on the source did not push the change to the waiting readers", contract.WavesAnnotation, contract.WavesOff)
	}
}

// TestWavesCatchUpAfterDowntime: a change made while confighash was down
// goes in waves too once it starts: its canary's rollout fails (no node, so
// --rollout-timeout ends it), and the other readers keep their stamp.
func TestWavesCatchUpAfterDowntime(t *testing.T) {
	ns := env.NewNamespace(t, true)
	cm := sharedConfig(t, ns)
	ds := waveReaders(t, ns, 3)
	before := env.StampOf(t, ds[0])
	stopConfighash(t)
	env.Update(t, cm, func() { cm.Data["v"] = "2" })
	if err := env.Confighash.Start(env.SpecContext(t), "--max-wave-size=4", "--rollout-timeout=3s"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Confighash.Stop(context.Background()) })
	waitHalted(t, ds[0])
	time.Sleep(3 * time.Second)
	for _, d := range ds[1:] {
		if env.StampOf(t, d) != before {
			t.Errorf("%s was re-stamped at start-up although the change's canary failed", d.Name)
		}
	}
}

// waitHalted waits for d to carry a halt record, and returns it.
func waitHalted(t *testing.T, d *appsv1.Deployment) string {
	t.Helper()
	var halted string
	err := wait.PollUntilContextTimeout(env.SpecContext(t), 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		got := &appsv1.Deployment{}
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(d), got); err != nil {
			return false, err
		}
		halted = got.Annotations[contract.HaltAnnotation]
		return halted != "", nil
	})
	if err != nil {
		t.Fatalf("%s (the canary) was not halted", d.Name)
	}
	return halted
}
