//go:build e2e && linux

package controlplane_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/confighash/confighash/e2e/controlplane"
)

var rolloutsResource = schema.GroupVersionResource{Group: "argoproj.io", Version: "v1alpha1", Resource: "rollouts"}

// TestRolloutsController runs the real Argo Rollouts controller against a
// control plane without a node and checks that a canary Rollout gets its
// ReplicaSet: the one thing specs about Rollouts rely on. Its pods stay
// Pending, which is enough. The first run builds the controller (about 5
// minutes on 2 cores) on top of the control plane.
func TestRolloutsController(t *testing.T) {
	bins := binaries(t)
	r, err := controlplane.EnsureRollouts(t.Context(), os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("controller %s, CRDs in %s", r.Controller, r.CRDDir)

	dir := t.TempDir()
	cp, err := controlplane.Start(t.Context(), bins, controlplane.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := cp.Stop(); err != nil {
			t.Error(err)
		}
	})
	ctx := t.Context()
	if err := r.InstallCRDs(ctx, cp.Kubectl, cp.Kubeconfig); err != nil {
		t.Fatal(err)
	}
	begin := time.Now()
	stop, err := controlplane.StartRollouts(ctx, r, cp.Kubeconfig, cp.Dir)
	if err != nil {
		t.Fatal(err)
	}
	// Registered after cp.Stop, so it runs first: the controller must not
	// outlive the API server it talks to.
	t.Cleanup(func() {
		if err := stop(); err != nil {
			t.Error(err)
		}
	})
	t.Logf("controller serving /healthz %s after start", time.Since(begin).Round(time.Millisecond))

	dyn, err := dynamic.NewForConfig(cp.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	client, err := kubernetes.NewForConfig(cp.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	labels := map[string]any{"app": "rollout-probe"}
	rollout, err := dyn.Resource(rolloutsResource).Namespace("default").Create(ctx, &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "argoproj.io/v1alpha1",
		"kind":       "Rollout",
		"metadata":   map[string]any{"name": "probe"},
		"spec": map[string]any{
			"replicas": int64(1),
			"selector": map[string]any{"matchLabels": labels},
			"strategy": map[string]any{"canary": map[string]any{}},
			"template": map[string]any{
				"metadata": map[string]any{"labels": labels},
				"spec": map[string]any{"containers": []any{map[string]any{
					"name": "c", "image": "busybox:1.37", "command": []any{"sleep", "3600"},
				}}},
			},
		},
	}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}

	// A ReplicaSet controlled by the Rollout, and the Rollout's status
	// naming that ReplicaSet's pod hash, can only come from the controller.
	created := time.Now()
	var rs *appsv1.ReplicaSet
	var podHash string
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		list, err := client.AppsV1().ReplicaSets("default").List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		rs = nil
		for i := range list.Items {
			if ref := metav1.GetControllerOf(&list.Items[i]); ref != nil && ref.UID == rollout.GetUID() {
				rs = &list.Items[i]
			}
		}
		got, err := dyn.Resource(rolloutsResource).Namespace("default").Get(ctx, "probe", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		podHash, _, _ = unstructured.NestedString(got.Object, "status", "currentPodHash")
		// The controller creates the ReplicaSet at 0 replicas and scales it
		// up in a second write: wait for that too.
		return rs != nil && podHash != "" && replicasOf(rs) == 1, nil
	})
	if err != nil {
		log, _ := controlplane.TailFile(filepath.Join(dir, "logs", "argo-rollouts.log"), 30)
		t.Fatalf("no ReplicaSet of 1 replica and currentPodHash for the Rollout (ReplicaSet %v, replicas %d, currentPodHash %q): %v\ncontroller log:\n%s",
			rs != nil, replicasOf(rs), podHash, err, log)
	}
	t.Logf("ReplicaSet %s appeared %s after the Rollout", rs.Name, time.Since(created).Round(time.Millisecond))
	if got := rs.Labels["rollouts-pod-template-hash"]; got != podHash {
		t.Errorf("ReplicaSet %s has rollouts-pod-template-hash %q, Rollout status.currentPodHash %q", rs.Name, got, podHash)
	}

	stopping := time.Now()
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	// Well under stopGrace (10 s) means SIGTERM was enough.
	t.Logf("controller stopped in %s", time.Since(stopping).Round(time.Millisecond))
	for _, p := range processesMentioning(t, dir) {
		if strings.Contains(p, "rollouts-controller") {
			t.Errorf("controller left running after stop: %s", p)
		}
	}
	if err := cp.Stop(); err != nil {
		t.Fatal(err)
	}
	if left := processesMentioning(t, dir); len(left) > 0 {
		t.Errorf("processes left running after Stop: %v", left)
	}
}

// replicasOf is a ReplicaSet's spec.replicas, or -1 when there is none.
func replicasOf(rs *appsv1.ReplicaSet) int32 {
	if rs == nil || rs.Spec.Replicas == nil {
		return -1
	}
	return *rs.Spec.Replicas
}
