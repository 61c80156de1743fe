//go:build e2e

package e2e

import (
	"context"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/confighash/confighash/e2e/framework"
	"github.com/confighash/confighash/internal/restamp"
)

// TestArgoRollouts runs the real Argo Rollouts controller (v1.10.2, built
// from the module proxy) against the cluster, with its CRDs installed while
// confighash is already running: confighash notices the CRD and watches
// Rollouts without a restart. Pods stay Pending on a cluster without a node,
// which is enough here: what is checked is the ReplicaSets the controller
// makes from the template confighash stamps.
func TestArgoRollouts(t *testing.T) {
	env.StartRollouts(t, t.TempDir())
	t.Run("canary", testRolloutCanary)
	t.Run("workloadRef", testRolloutWorkloadRef)
}

// envFromSettings is a pod spec reading key mode of ConfigMap settings
// through env.
func envFromSettings() corev1.PodSpec {
	return corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "app", Env: []corev1.EnvVar{{
		Name: "MODE", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: "settings"}, Key: "mode"}}}}}}}
}

// settingsConfig creates configmap/settings holding mode: one, which
// envFromSettings reads.
func settingsConfig(t *testing.T, ns string) *corev1.ConfigMap {
	t.Helper()
	cm := configMap(ns, "settings", map[string]string{"mode": "one"})
	env.Create(t, cm)
	return cm
}

// changeSettings sets mode two in cm, settingsConfig's ConfigMap, and
// waits until obj, whose pods run spec, carries the stamp of spec's
// sources then (for as long as the hook may take to notice a new kind,
// restamp.ProbeInterval, and more); it returns that stamp.
func changeSettings(t *testing.T, cm *corev1.ConfigMap, obj client.Object, spec corev1.PodSpec) string {
	t.Helper()
	env.Update(t, cm, func() { cm.Data["mode"] = "two" })
	want := expectedChecksum(t, cm.Namespace, &spec, nil)
	waitStamp(t, obj, want, restamp.ProbeInterval+20*time.Second)
	return want
}

// createStamped creates obj, whose pods run spec, checks that the webhook
// stamped it with the checksum of spec's sources as they are, and returns
// the stamp.
func createStamped(t *testing.T, obj client.Object, spec corev1.PodSpec) string {
	t.Helper()
	env.Create(t, obj)
	got := env.StampOf(t, obj)
	if want := expectedChecksum(t, obj.GetNamespace(), &spec, nil); got != want {
		t.Fatalf("%s stamp at create = %q, want %q", obj.GetName(), got, want)
	}
	return got
}

// rolloutOf is a one-replica canary Rollout without steps, as a manifest
// would declare it: its template has no stamp.
func rolloutOf(ns, name string, spec corev1.PodSpec) *unstructured.Unstructured {
	return framework.CanaryRollout(ns, name, 1, spec)
}

// expectRolloutReplicaSets waits for n ReplicaSets, then checks that the
// count holds for the settle time.
func expectRolloutReplicaSets(t *testing.T, ns, name string, n int) []string {
	t.Helper()
	var got []string
	err := wait.PollUntilContextTimeout(env.SpecContext(t), 200*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		got = env.RolloutReplicaSets(t, ns, name)
		return len(got) >= n, nil
	})
	if err != nil {
		t.Fatalf("Rollout %s has ReplicaSets %v, want %d", name, got, n)
	}
	time.Sleep(settle)
	if got = env.RolloutReplicaSets(t, ns, name); len(got) != n {
		t.Fatalf("Rollout %s has ReplicaSets %v after settling, want exactly %d", name, got, n)
	}
	return got
}

// currentPodHash is the Rollout's status.currentPodHash: the template hash
// of the ReplicaSet it is rolling to.
func currentPodHash(t *testing.T, ns, name string) string {
	t.Helper()
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(framework.RolloutGVK)
	if err := env.Client.Get(env.SpecContext(t), client.ObjectKey{Namespace: ns, Name: name}, u); err != nil {
		t.Fatal(err)
	}
	h, _, _ := unstructured.NestedString(u.Object, "status", "currentPodHash")
	return h
}

// testRolloutCanary: a canary Rollout is stamped at admission; a config
// change makes one new ReplicaSet, a re-apply none, and a revert goes back
// to the first ReplicaSet (the Rollout controller finds it by template
// hash) without a third.
func testRolloutCanary(t *testing.T) {
	ns := env.NewNamespace(t, true)
	cm := settingsConfig(t, ns)
	spec := envFromSettings()
	ro := rolloutOf(ns, "web", spec)
	first := createStamped(t, ro, spec)
	hashes := expectRolloutReplicaSets(t, ns, "web", 1)
	h1 := hashes[0]

	second := changeSettings(t, cm, ro, spec)
	hashes = expectRolloutReplicaSets(t, ns, "web", 2)

	// A replace with the manifest (no stamp) keeps the stamp: no new
	// ReplicaSet. The controller writes the Rollout's own annotations, so
	// the replace carries those, as kubectl replace of an edited live
	// object would, and retries when the controller wrote in between.
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		live := rolloutOf(ns, "web", spec)
		if err := env.Client.Get(env.SpecContext(t), client.ObjectKeyFromObject(live), live); err != nil {
			return err
		}
		again := rolloutOf(ns, "web", spec)
		again.SetResourceVersion(live.GetResourceVersion())
		again.SetAnnotations(live.GetAnnotations())
		return env.Client.Update(env.SpecContext(t), again)
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := env.StampOf(t, ro); got != second {
		t.Fatalf("after a re-apply the stamp is %q, want %q kept", got, second)
	}
	expectRolloutReplicaSets(t, ns, "web", 2)

	// Revert: the stamp returns to the first value, so the template is the
	// first ReplicaSet's again.
	reverted := time.Now()
	env.Update(t, cm, func() { cm.Data["mode"] = "one" })
	waitStamp(t, ro, first, 20*time.Second)
	err = wait.PollUntilContextTimeout(env.SpecContext(t), 100*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		return currentPodHash(t, ns, "web") == h1, nil
	})
	if err != nil {
		t.Fatalf("after the revert the Rollout's currentPodHash is %q, want the first ReplicaSet's %q", currentPodHash(t, ns, "web"), h1)
	}
	t.Logf("revert: back on the first ReplicaSet %s %s after the ConfigMap was reverted", h1, time.Since(reverted).Round(10*time.Millisecond))
	if got := expectRolloutReplicaSets(t, ns, "web", 2); !slices.Equal(got, hashes) {
		t.Errorf("ReplicaSets after the revert %v, want the same two %v", got, hashes)
	}
}

// testRolloutWorkloadRef: a Rollout that reads its template from a
// Deployment (spec.workloadRef) is left alone by confighash; stamping the
// Deployment is enough for the Rollout to make one new ReplicaSet per
// config change.
func testRolloutWorkloadRef(t *testing.T) {
	ns := env.NewNamespace(t, true)
	cm := settingsConfig(t, ns)
	spec := envFromSettings()
	d := deploymentOf(ns, "base", spec)
	d.Spec.Replicas = ptr.To[int32](0) // the Rollout runs the pods
	d.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "ref"}}
	d.Spec.Template.Labels = map[string]string{"app": "ref"}
	createStamped(t, d, spec)

	ro := &unstructured.Unstructured{}
	ro.SetGroupVersionKind(framework.RolloutGVK)
	ro.SetNamespace(ns)
	ro.SetName("ref")
	ro.Object["spec"] = map[string]any{
		"replicas":    int64(1),
		"selector":    map[string]any{"matchLabels": map[string]any{"app": "ref"}},
		"workloadRef": map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "name": "base"},
		"strategy":    map[string]any{"canary": map[string]any{}},
	}
	env.Create(t, ro)
	if _, found, _ := unstructured.NestedMap(ro.Object, "spec", "template"); found {
		t.Fatal("confighash gave a workloadRef Rollout a template")
	}
	expectRolloutReplicaSets(t, ns, "ref", 1)

	env.Update(t, cm, func() { cm.Data["mode"] = "two" })
	want := expectedChecksum(t, ns, &spec, nil)
	if err := wait.PollUntilContextTimeout(env.SpecContext(t), 100*time.Millisecond, 20*time.Second, true, func(context.Context) (bool, error) {
		return env.StampOf(t, d) == want, nil
	}); err != nil {
		t.Fatalf("Deployment not re-stamped: %q, want %q", env.StampOf(t, d), want)
	}
	expectRolloutReplicaSets(t, ns, "ref", 2)
}
