//go:build e2e

package e2e

import (
	"context"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/wait"
)

// TestUpgradeAfterRecentReadsRollsOnce: a ConfigMap and then the
// Deployment reading it are written (a Helm upgrade, a kubectl apply),
// moments after other admissions in the namespace read that ConfigMap at
// an earlier version. The webhook must stamp the upgrade with the content
// written just before it, so the upgrade rolls once: the earlier reads
// (a namespace LIST, then a GET made between two writes) must not answer
// it, or the stamp names the content before the last write and the hook's
// correction is a second rollout.
func TestUpgradeAfterRecentReadsRollsOnce(t *testing.T) {
	ns := env.NewNamespace(t, true)
	env.Create(t, configMap(ns, "cfg", map[string]string{"k": "v1"}))
	spec := podSpec("cfg", "unused")
	spec.Containers[0].Env = nil
	d := deploymentOf(ns, "app", spec)
	env.Create(t, d)
	waitStamp(t, d, expectedChecksum(t, ns, &spec, nil), 30*time.Second)
	expectReplicaSets(t, ns, "app", 1)

	ctx := env.SpecContext(t)
	start := time.Now()
	// Another reader is created: its admission reads cfg at v1.
	env.Create(t, deploymentOf(ns, "peer-1", spec))
	write := func(v string) {
		t.Helper()
		strategicPatch(t, &corev1.ConfigMap{}, ns, "cfg", map[string]any{"data": map[string]any{"k": v}})
		// Until the webhook's cache has it, so that what is stale is
		// only what the webhook remembers of its reads.
		want := expectedChecksum(t, ns, &spec, nil)
		err := wait.PollUntilContextTimeout(ctx, 5*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
			got, _, err := dryRunStamp(ctx, ns, spec)
			return got == want, err
		})
		if err != nil {
			t.Fatalf("the webhook's cache never held cfg at %s: %v", v, err)
		}
	}
	write("v2")
	// A second reader: its admission reads cfg at v2.
	env.Create(t, deploymentOf(ns, "peer-2", spec))
	write("v3")
	// The upgrade: a new image, after the ConfigMap's last write.
	strategicPatch(t, &appsv1.Deployment{}, ns, "app", map[string]any{"spec": map[string]any{"template": map[string]any{
		"spec": map[string]any{"containers": []map[string]any{{"name": "app", "image": "registry.k8s.io/pause:3.9"}}}}}})
	t.Logf("two reads, two writes and the upgrade within %s", time.Since(start).Round(time.Millisecond))

	spec.Containers[0].Image = "registry.k8s.io/pause:3.9"
	want := expectedChecksum(t, ns, &spec, nil)
	if got := env.StampOf(t, d); got != want {
		t.Errorf("the upgrade was stamped %q, want %q: the content of v3, written before it", got, want)
	}
	expectReplicaSets(t, ns, "app", 2) // one rollout, not two
}
