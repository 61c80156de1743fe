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
// one new ReplicaSet: none lost, none rolled twice.
func TestLeaderFailoverMidFanOut(t *testing.T) {
	ctx := env.SpecContext(t)
	ns := env.NewNamespace(t, true)
	cm := &corev1.ConfigMap{}
	cm.Namespace, cm.Name, cm.Data = ns, "shared", map[string]string{"v": "1"}
	env.Create(t, cm)
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

	old, err := leader(ctx)
	if err != nil {
		t.Fatal(err)
	}
	env.Update(t, cm, func() { cm.Data["v"] = "2" })
	// The hook coalesces for 1 s, then writes the 50 stamps: delete the
	// leader as soon as the first one has landed.
	if err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		return restamped(t, ns, before) > 0, nil
	}); err != nil {
		t.Fatal("the hook re-stamped no reader")
	}
	deleted := time.Now()
	env.Kubectl(t, "", "delete", "pod", "-n", framework.Namespace, old, "--wait=false")
	t.Logf("leader %s deleted with %d of %d readers re-stamped", old, restamped(t, ns, before), readers)

	var takeover time.Duration
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		holder, err := leader(ctx)
		if err != nil || holder == "" || holder == old {
			return false, nil //nolint:nilerr // Lease in flux
		}
		takeover = time.Since(deleted)
		t.Logf("Lease taken over by %s %s after the leader's deletion", holder, takeover.Round(100*time.Millisecond))
		return true, nil
	})
	if err != nil {
		t.Fatalf("no other replica took the Lease over: %v", err)
	}

	// The content the readers must end on: what the webhook stamps on a
	// new reader of the changed ConfigMap.
	probe := readerOf(ns, readers)
	env.Create(t, probe)
	want := env.StampOf(t, probe)
	if want == before {
		t.Fatal("a fresh reader got the old stamp")
	}
	err = wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, 2*time.Minute, true, func(context.Context) (bool, error) {
		for _, d := range ds {
			if env.StampOf(t, d) != want {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		stale := 0
		for _, d := range ds {
			if env.StampOf(t, d) != want {
				stale++
			}
		}
		t.Fatalf("%d of %d readers did not end on the new content", stale, readers)
	}
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

// restamped counts the namespace's Deployments whose stamp is no longer old,
// with one list rather than a read per reader.
func restamped(t *testing.T, ns, old string) int {
	t.Helper()
	l := &appsv1.DeploymentList{}
	if err := env.Client.List(env.SpecContext(t), l, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, d := range l.Items {
		if d.Spec.Template.Annotations[contract.ChecksumAnnotation] != old {
			n++
		}
	}
	return n
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
