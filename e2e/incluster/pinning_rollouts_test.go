//go:build e2e

package incluster

import (
	"context"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// testPinnedAbort (a subtest of TestRolloutsCanaryOnNode, which runs the
// controller): a canary Rollout in a pinning namespace reads
// ConfigMap shared (env, mounted file, subPath file). A change starts its
// canary, whose pod prints the new value; the Rollout is aborted as
// `kubectl argo rollouts abort` does. The stable ReplicaSet's pods then
// print the old value: the one the abort scales back up, and the one that
// replaces a deleted stable pod, both started while the ConfigMap holds
// the new value; and the canary is gone. Without pinning both read the
// live ConfigMap and print the new value (testCanaryAbort shows the
// first).
func testPinnedAbort(t *testing.T) {
	ctx := env.SpecContext(t)
	ns := pinningNamespace(t)
	cm := sharedConfig(t, ns, map[string]string{"mode": "good"})
	ro := canaryRollout(ns, "web", canaryReplicas, pinnedReader(ns, "web", 1).Spec.Template.Spec)
	env.Create(t, ro)
	stable := waitHealthy(t, ro).StableRS
	pods := rolloutsPods(t, ro, waitPods(t, ro, stable, canaryReplicas))
	snapshot1 := pinnedTo(t, pods[0])
	for _, p := range pods {
		expectPinnedValue(t, p, snapshot1, "good")
	}

	changed := time.Now()
	env.Update(t, cm, func() { cm.Data["mode"] = "second" })
	s := waitCanaryPaused(t, ro, stable, rolloutWait)
	canary := rolloutsPods(t, ro, waitPods(t, ro, s.CurrentPodHash, 1))[0]
	expectPinnedValue(t, canary, "", "second")
	t.Logf("change -> canary pod %s printing second: %s", canary.Name, time.Since(changed).Round(100*time.Millisecond))

	aborted := time.Now()
	abort(t, ro)
	waitRollout(t, ro, "Degraded by the abort", rolloutWait, func(s rolloutState) bool { return s.Phase == "Degraded" && s.Abort })
	rolloutsCanaryGone(t, ro, s.CurrentPodHash)
	before := pods
	pods = rolloutsPods(t, ro, waitPods(t, ro, stable, canaryReplicas))
	if !slices.ContainsFunc(pods, func(p corev1.Pod) bool {
		return !slices.ContainsFunc(before, func(b corev1.Pod) bool { return b.UID == p.UID })
	}) {
		t.Fatal("no stable pod started after the change: the canary step scaled none down")
	}
	for _, p := range pods {
		expectPinnedValue(t, p, snapshot1, "good")
	}
	t.Logf("abort -> only stable pods, all printing good from %s: %s", snapshot1, time.Since(aborted).Round(100*time.Millisecond))

	deleted := time.Now()
	if err := env.Client.Delete(ctx, &pods[0]); err != nil {
		t.Fatal(err)
	}
	replaced := waitNewPod(t, ns, "web-"+stable, pods)
	expectPinnedValue(t, replaced, snapshot1, "good")
	rolloutsCanaryGone(t, ro, s.CurrentPodHash)
	t.Logf("deleted stable pod %s -> %s prints good: %s", pods[0].Name, replaced.Name, time.Since(deleted).Round(100*time.Millisecond))
}

// rolloutsPods reads the named pods of ro's namespace.
func rolloutsPods(t *testing.T, ro *unstructured.Unstructured, names []string) []corev1.Pod {
	t.Helper()
	out := make([]corev1.Pod, len(names))
	for i, n := range names {
		if err := env.Client.Get(env.SpecContext(t), client.ObjectKey{Namespace: ro.GetNamespace(), Name: n}, &out[i]); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// rolloutsCanaryGone waits until no pod of ro's canary ReplicaSet, of
// template hash hash, is left.
func rolloutsCanaryGone(t *testing.T, ro *unstructured.Unstructured, hash string) {
	t.Helper()
	err := wait.PollUntilContextTimeout(env.SpecContext(t), 100*time.Millisecond, rolloutWait, true, func(ctx context.Context) (bool, error) {
		left, err := hashPods(ctx, ro, hash)
		return len(left) == 0, err
	})
	if err != nil {
		t.Fatal("the canary's pods outlived the abort")
	}
}
