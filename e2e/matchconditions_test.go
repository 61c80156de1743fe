//go:build e2e

package e2e

import (
	"context"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/confighash/confighash/internal/contract"
	"github.com/confighash/confighash/webhook"
)

// TestAdmissionSkipsControllerOwned counts, with the apiserver's own
// metrics, the calls it makes to confighash: the Pods a ReplicaSet creates,
// a Job a controller owns and an opted-out Deployment must cost none, while
// the Deployment and a bare Pod are still sent. The cluster has no node, so
// the Pods stay Pending; they are admitted all the same.
func TestAdmissionSkipsControllerOwned(t *testing.T) {
	ctx := env.SpecContext(t)
	ns := env.NewNamespace(t, true)
	const replicas = 20
	spec := corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10"}}}
	creates := func(step string, want float64, do func()) {
		t.Helper()
		before := readWebhookCalls(ctx, t, webhook.Name)
		do()
		got := readWebhookCalls(ctx, t, webhook.Name).minus(before).Calls["CREATE"]
		if got != want {
			t.Errorf("%s: %v CREATE calls to %s, want %v", step, got, webhook.Name, want)
		} else {
			t.Logf("%s: %v CREATE calls", step, got)
		}
	}

	creates("Deployment of 20 replicas and its Pods", 1, func() {
		d := deploymentOf(ns, "many", spec)
		d.Spec.Replicas = ptr.To[int32](replicas)
		env.Create(t, d)
		waitPods(ctx, t, ns, replicas)
	})
	creates("a bare Pod", 1, func() {
		env.Create(t, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "bare"}, Spec: spec})
	})
	creates("an opted-out Deployment", 0, func() {
		d := deploymentOf(ns, "out", spec)
		d.Annotations = map[string]string{contract.InjectionAnnotation: contract.InjectionDisabled}
		d.Spec.Replicas = ptr.To[int32](0)
		env.Create(t, d)
	})
	creates("a Job owned by a controller, and its Pod", 0, func() {
		owner := configMap(ns, "owner", nil)
		env.Create(t, owner)
		job := &batchv1.Job{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "owned", OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "v1", Kind: "ConfigMap", Name: owner.Name, UID: owner.UID, Controller: ptr.To(true),
			}}},
			Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: *spec.DeepCopy()}},
		}
		job.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyNever
		env.Create(t, job)
		waitPods(ctx, t, ns, replicas+2)
	})
}

// waitPods waits until ns holds at least n Pods.
func waitPods(ctx context.Context, t *testing.T, ns string, n int) {
	t.Helper()
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		l := &corev1.PodList{}
		if err := env.Client.List(ctx, l, client.InNamespace(ns)); err != nil {
			return false, err
		}
		return len(l.Items) >= n, nil
	})
	if err != nil {
		t.Fatalf("waiting for %d pods in %s: %v", n, ns, err)
	}
}
