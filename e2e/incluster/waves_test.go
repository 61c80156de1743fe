//go:build e2e

package incluster

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/confighash/confighash/e2e/images"
	"github.com/confighash/confighash/internal/contract"
)

// picky is a Deployment of one replica, maxSurge 1 and maxUnavailable 0,
// with no readiness probe, whose program prints MODE and exits at start
// when it is "bad": the case in which Kubernetes alone scales every old
// ReplicaSet away, since a container that runs a moment counts as
// available.
func picky(ns, name string) *appsv1.Deployment {
	spec := corev1.PodSpec{Containers: []corev1.Container{{
		Name: "app", Image: images.SampleApp().Ref,
		Args: []string{"-env", "MODE", "-refuse", "MODE=bad"},
		Env: []corev1.EnvVar{{Name: "MODE", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: "shared"}, Key: "mode"}}}},
	}}}
	d := deployment(ns, name, 1, spec)
	d.Spec.Strategy = appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType,
		RollingUpdate: &appsv1.RollingUpdateDeployment{MaxSurge: ptr.To(intstr.FromInt32(1)), MaxUnavailable: ptr.To(intstr.FromInt32(0))}}
	return d
}

// rolledOutReaders makes configmap/shared with data in a new namespace and
// n Deployments reader-0, reader-1, ... of it, built by reader, and waits
// until each has rolled out.
func rolledOutReaders(t *testing.T, data map[string]string, n int, reader func(ns, name string) *appsv1.Deployment) (*corev1.ConfigMap, []*appsv1.Deployment) {
	t.Helper()
	ns := env.NewNamespace(t, true)
	cm := sharedConfig(t, ns, data)
	var ds []*appsv1.Deployment
	for i := range n {
		d := reader(ns, fmt.Sprintf("reader-%d", i))
		env.Create(t, d)
		ds = append(ds, d)
	}
	for _, d := range ds {
		if err := env.WaitRollout(env.SpecContext(t), ns, d.Name, 3*time.Minute); err != nil {
			t.Fatal(err)
		}
	}
	return cm, ds
}

// TestBadValueHaltsAtTheCanary: six Deployments read one ConfigMap, which
// gets a value their program refuses at start. Exactly one Deployment
// starts rolling; the other five keep their stamp and their pods; the halt
// is on the canary and on the ConfigMap as RolloutHalted Events and on the
// canary's metadata. The fix rolls all six to it, each once more.
func TestBadValueHaltsAtTheCanary(t *testing.T) {
	ctx := env.SpecContext(t)
	cm, ds := rolledOutReaders(t, map[string]string{"mode": "good"}, 6, picky)
	ns := cm.Namespace
	first := map[string]string{}
	for _, d := range ds {
		first[d.Name] = env.CurrentReplicaSet(t, ns, d.Name)
	}
	stamp := env.StampOf(t, ds[0])

	changed := time.Now()
	env.Update(t, cm, func() { cm.Data["mode"] = "bad" })
	var canary *appsv1.Deployment
	err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		for _, d := range ds {
			if env.StampOf(t, d) != stamp {
				canary = d
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatal("no reader was re-stamped for the bad value")
	}
	// The halt is on the canary's metadata within seconds of its crash.
	var halt string
	err = wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		d := &appsv1.Deployment{}
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(canary), d); err != nil {
			return false, err
		}
		halt = d.Annotations[contract.HaltAnnotation]
		return halt != "", nil
	})
	if err != nil {
		t.Fatalf("%s: no %s annotation after its rollout broke", canary.Name, contract.HaltAnnotation)
	}
	t.Logf("%s halted %s after the change: %s", canary.Name, time.Since(changed).Round(100*time.Millisecond), halt)
	h, err := contract.ParseHalt(halt)
	if err != nil || len(h.Changes) != 1 || h.Changes[0].Source != "configmap/shared" {
		t.Fatalf("halt %q: %+v, %v", halt, h, err)
	}
	for _, on := range []client.Object{canary, cm} {
		waitEvent(t, on, contract.ReasonRolloutHalted)
	}
	// The other five keep their stamp and their one ReplicaSet, with its
	// pod running, well past the time the next wave would have taken.
	time.Sleep(20 * time.Second)
	for _, d := range ds {
		if d == canary {
			continue
		}
		if got := env.StampOf(t, d); got != stamp {
			t.Errorf("%s was re-stamped while the change was halted", d.Name)
		}
		if n := len(env.ReplicaSets(t, ns, d.Name)); n != 1 {
			t.Errorf("%s has %d ReplicaSets while the change was halted, want 1", d.Name, n)
		}
		runningPod(t, ns, first[d.Name])
	}

	// The fix goes to all six, in waves again; the canary rolls once more,
	// the others once.
	env.Update(t, cm, func() { cm.Data["mode"] = "fixed" })
	err = wait.PollUntilContextTimeout(ctx, time.Second, 4*time.Minute, true, func(context.Context) (bool, error) {
		for _, d := range ds {
			if env.StampOf(t, d) == stamp {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		t.Fatal("the fix did not reach every reader")
	}
	for _, d := range ds {
		if err := env.WaitRollout(ctx, ns, d.Name, 2*time.Minute); err != nil {
			t.Fatal(err)
		}
		want := 2
		if d == canary {
			want = 3
		}
		if n := len(env.ReplicaSets(t, ns, d.Name)); n != want {
			t.Errorf("%s: %d ReplicaSets after the fix, want %d", d.Name, n, want)
		}
		pod, _ := runningPod(t, ns, env.CurrentReplicaSet(t, ns, d.Name))
		if got := podLog(t, ns, pod, 1); !slices.Contains(got, "env:MODE=fixed") {
			t.Errorf("%s's pod printed %q, want env:MODE=fixed", d.Name, got)
		}
	}
	t.Logf("the fix reached all six in %s", time.Since(changed).Round(time.Second))
}

// waitEvent waits for an Event with reason on obj from confighash.
func waitEvent(t *testing.T, obj client.Object, reason string) {
	t.Helper()
	err := wait.PollUntilContextTimeout(env.SpecContext(t), 250*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		l := &corev1.EventList{}
		if err := env.Client.List(ctx, l, client.InNamespace(obj.GetNamespace())); err != nil {
			return false, err
		}
		for _, e := range l.Items {
			if e.Reason == reason && e.InvolvedObject.Name == obj.GetName() && e.ReportingController == contract.EventSource {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("no %s Event on %s", reason, obj.GetName())
	}
}
