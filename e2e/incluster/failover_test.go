//go:build e2e

package incluster

import (
	"context"
	"fmt"
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

// readers is the size of the fan-out the leader is killed in.
const readers = 50

// readerOf is a Deployment scaled to zero that reads the ConfigMap through
// the environment: the stamp and its ReplicaSets are what count here, and
// fifty Deployments without pods keep the node quiet.
func readerOf(ns string, i int) *appsv1.Deployment {
	spec := corev1.PodSpec{Containers: []corev1.Container{{
		Name: "app", Image: images.SampleApp().Ref,
		Env: []corev1.EnvVar{{Name: "V", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: "shared"}, Key: "v"}}}},
	}}}
	return deployment(ns, fmt.Sprintf("reader-%02d", i), 0, spec)
}

// TestLeaderFailoverMidFanOut changes a ConfigMap that 50 Deployments read and
// deletes the leader pod while the hook re-stamps them. The other replica
// takes the Lease over, and every reader ends on the new content with exactly
// one new ReplicaSet: none lost, none rolled twice. The readers have 0
// replicas, so they are in no wave: this is the fan-out all at once.
func TestLeaderFailoverMidFanOut(t *testing.T) {
	ns := env.NewNamespace(t, true)
	cm := sharedConfig(t, ns, map[string]string{"v": "1"})
	var ds []*appsv1.Deployment
	for i := range readers {
		d := readerOf(ns, i)
		env.Create(t, d)
		ds = append(ds, d)
	}
	before := env.StampOf(t, ds[0])
	if before == "" {
		t.Fatal("readers not stamped at creation")
	}
	for _, d := range ds {
		waitReplicaSetCount(t, d, 1)
	}

	env.Update(t, cm, func() { cm.Data["v"] = "2" })
	// The hook coalesces for 1 s, then writes the 50 stamps: delete the
	// leader as soon as the first one has landed.
	deleteLeaderOnce(t, func() bool { return len(restamped(t, ns, before)) > 0 })
	expectEachRolledOnce(t, ns, before, ds)
}

// TestLeaderFailoverMidWaves: seven one-replica Deployments read a
// ConfigMap, so a change reaches them in waves of 1, 2 and 4, each after
// the previous one rolled out and soaked (10 s, the shipped default). The
// leader pod is deleted once the second wave has begun. The replica that
// takes the Lease over goes on from the records on the readers: every
// reader ends on the new content with exactly one new ReplicaSet, none lost
// and none rolled twice, and the waves are not skipped (the last wave
// starts after the second one rolled out).
func TestLeaderFailoverMidWaves(t *testing.T) {
	ctx := env.SpecContext(t)
	cm, ds := rolledOutReaders(t, map[string]string{"v": "1"}, 7, func(ns, name string) *appsv1.Deployment {
		return plainReader(ns, name, "shared")
	})
	ns := cm.Namespace
	before := env.StampOf(t, ds[0])

	env.Update(t, cm, func() { cm.Data["v"] = "2" })
	deleteLeaderOnce(t, func() bool { return len(restamped(t, ns, before)) >= 2 })
	early := restamped(t, ns, before)
	if len(early) > 3 {
		t.Fatalf("%d readers re-stamped by the time the second wave began: the spec tests no failover mid-waves", len(early))
	}
	// The last wave (4) may begin only once the first two (1 + 2) have
	// rolled out, whoever leads: poll until it begins, then look at them.
	err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, 3*time.Minute, true, func(context.Context) (bool, error) {
		now := restamped(t, ns, before)
		if len(now) <= 3 {
			early = now
			return false, nil
		}
		for _, name := range early {
			d := &appsv1.Deployment{}
			if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, d); err != nil {
				return false, err
			}
			if rolling(d) {
				t.Errorf("the last wave began while %s, of the wave before, was still rolling", name)
			}
		}
		return true, nil
	})
	if err != nil {
		t.Fatalf("the last wave did not begin after the failover: %v", err)
	}
	if len(early) != 3 {
		t.Errorf("the last wave began with %d readers re-stamped before it, want 3 (waves of 1 and 2)", len(early))
	}
	expectEachRolledOnce(t, ns, before, ds)
	for _, d := range ds {
		if err := env.WaitRollout(ctx, ns, d.Name, 2*time.Minute); err != nil {
			t.Error(err)
		}
	}
}

// deleteLeaderOnce polls ready every 20 ms; once it holds, it deletes the
// pod that holds the Lease and waits until another replica holds it.
func deleteLeaderOnce(t *testing.T, ready func() bool) {
	t.Helper()
	ctx := env.SpecContext(t)
	old, err := leader(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		return ready(), nil
	}); err != nil {
		t.Fatal("the hook did not get as far as the leader's deletion needs")
	}
	deleted := time.Now()
	env.Kubectl(t, "", "delete", "pod", "-n", framework.Namespace, old, "--wait=false")
	t.Logf("leader %s deleted", old)
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		holder, err := leader(ctx)
		if err != nil || holder == "" || holder == old {
			return false, nil //nolint:nilerr // Lease in flux
		}
		t.Logf("Lease taken over by %s %s after the leader's deletion", holder, time.Since(deleted).Round(100*time.Millisecond))
		return true, nil
	})
	if err != nil {
		t.Fatalf("no other replica took the Lease over: %v", err)
	}
}

// expectEachRolledOnce waits until every reader of ds carries the stamp
// that the webhook gives a new reader of configmap/shared now, then checks
// that each has exactly two ReplicaSets (one per content), and that
// confighash gets its second replica back.
func expectEachRolledOnce(t *testing.T, ns, before string, ds []*appsv1.Deployment) {
	t.Helper()
	ctx := env.SpecContext(t)
	probe := readerOf(ns, readers)
	env.Create(t, probe)
	want := env.StampOf(t, probe)
	if want == before {
		t.Fatal("a fresh reader got the old stamp")
	}
	framework.WaitAllStamped(t, env.Env, ds, want, 250*time.Millisecond, 3*time.Minute)
	time.Sleep(settle)
	for _, d := range ds {
		if n := len(env.ReplicaSets(t, ns, d.Name)); n != 2 {
			t.Errorf("%s has %d ReplicaSets, want 2 (one per content)", d.Name, n)
		}
	}
	if err := env.WaitRollout(ctx, framework.Namespace, "confighash", 3*time.Minute); err != nil {
		t.Fatalf("confighash did not get its second replica back: %v", err)
	}
}

// restamped lists the namespace's Deployments whose stamp is no longer
// old, with one list rather than a read per reader.
func restamped(t *testing.T, ns, old string) []string {
	t.Helper()
	l := &appsv1.DeploymentList{}
	if err := env.Client.List(env.SpecContext(t), l, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, d := range l.Items {
		if d.Spec.Template.Annotations[contract.ChecksumAnnotation] != old {
			names = append(names, d.Name)
		}
	}
	return names
}

// waitReplicaSetCount waits until a Deployment has n ReplicaSets.
func waitReplicaSetCount(t *testing.T, d *appsv1.Deployment, n int) {
	t.Helper()
	err := wait.PollUntilContextTimeout(env.SpecContext(t), 200*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		return len(env.ReplicaSets(t, d.Namespace, d.Name)) == n, nil
	})
	if err != nil {
		t.Fatalf("%s: want %d ReplicaSets, have %d", d.Name, n, len(env.ReplicaSets(t, d.Namespace, d.Name)))
	}
}
