//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/confighash/confighash/internal/pinning"
	"github.com/confighash/confighash/webhook"
)

// TestBenchPinning measures what pinning adds to a pod's admission, as the
// apiserver times its call to the pin webhook: for the first pod of each
// revision, which makes its snapshots, and for later pods, which find them.
// Pods of a namespace that does not pin never reach that webhook (its
// namespaceSelector), so they pay nothing. It also counts the snapshots: one
// per pinned source and content, shared by the revisions that read it; and
// the writes to ConfigMaps and Secrets the apiserver served meanwhile (no
// other writer of them runs in those phases): at most one per pinned
// source for a revision's first pod, none for later pods.
func TestBenchPinning(t *testing.T) {
	benchOnly(t)
	const workloads = 20
	restartWith(t, "--pinning")
	ns := pinningNamespace(t)
	env.Create(t, secret(ns, "db", map[string]string{"password": "p1"}))
	deployments := make([]*appsv1.Deployment, workloads)
	for i := range deployments {
		cm := fmt.Sprintf("app-%d", i)
		env.Create(t, configMap(ns, cm, map[string]string{"k": "v1"}))
		deployments[i] = deploymentOf(ns, fmt.Sprintf("web-%d", i), podSpec(cm, "db"))
		deployments[i].Spec.Selector.MatchLabels["i"] = cm
		deployments[i].Spec.Template.Labels["i"] = cm
	}
	time.Sleep(time.Second) // the Namespace cache sees the label
	ctx := env.SpecContext(t)

	start, writes0 := readWebhookCalls(ctx, t, webhook.PinName), configWrites(ctx, t)
	for _, d := range deployments {
		env.Create(t, d)
	}
	pinnedPods(t, ns, workloads)
	firsts, writes1 := readWebhookCalls(ctx, t, webhook.PinName), configWrites(ctx, t)
	for _, d := range deployments {
		env.Update(t, d, func() { d.Spec.Replicas = new(int32(3)) })
	}
	pinnedPods(t, ns, 3*workloads)
	later, writes2 := readWebhookCalls(ctx, t, webhook.PinName), configWrites(ctx, t)

	perCall := func(a, b webhookCalls) (float64, float64) {
		n := b.Calls["CREATE"] - a.Calls["CREATE"]
		return n, (b.Seconds["CREATE"] - a.Seconds["CREATE"]) / n * 1000
	}
	n1, ms1 := perCall(start, firsts)
	n2, ms2 := perCall(firsts, later)
	cms, ss := snapshots(t, ns)
	t.Logf("pin webhook, as the apiserver times it: first pod of a revision %.1f ms (%v calls), later pods %.1f ms (%v calls)", ms1, n1, ms2, n2)
	t.Logf("writes to ConfigMaps and Secrets: %v for the %d revisions' first pods (2 pinned sources each), %v for the %v later pods", writes1-writes0, workloads, writes2-writes1, n2)
	if writes1-writes0 > 2*workloads || writes2 != writes1 {
		t.Errorf("want at most one write per pinned source for a revision's first pod and none for later pods")
	}
	t.Logf("snapshots: %d ConfigMaps for %d revisions, %d Secret shared by them (owners %d)", len(cms), workloads, len(ss), len(ss[0].OwnerReferences))
	if len(cms) != workloads || len(ss) != 1 || len(ss[0].OwnerReferences) != workloads {
		t.Errorf("want %d ConfigMap snapshots and one Secret snapshot owned by all %d ReplicaSets", workloads, workloads)
	}
}

// pinnedPods waits until ns has n pods, every one pinned.
func pinnedPods(t *testing.T, ns string, n int) {
	t.Helper()
	err := wait.PollUntilContextTimeout(env.SpecContext(t), 200*time.Millisecond, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
		var l corev1.PodList
		if err := env.Client.List(ctx, &l, client.InNamespace(ns)); err != nil {
			return false, err
		}
		for _, p := range l.Items {
			if v := p.Annotations[pinning.PodAnnotation]; v != "true" {
				return false, fmt.Errorf("pod %s: %s=%q", p.Name, pinning.PodAnnotation, v)
			}
		}
		return len(l.Items) >= n, nil
	})
	if err != nil {
		t.Fatalf("waiting for %d pinned pods: %v", n, err)
	}
}

// configWrites is the apiserver's count of the writes it served to
// ConfigMaps and Secrets, by any client.
func configWrites(ctx context.Context, t *testing.T) float64 {
	t.Helper()
	var n float64
	for _, line := range strings.Split(apiserverMetrics(ctx, t), "\n") {
		rest, found := strings.CutPrefix(line, "apiserver_request_total{")
		labels, value, ok := strings.Cut(rest, "} ")
		if !found || !ok || !strings.HasPrefix(labelValue(labels, "code"), "2") || labelValue(labels, "dry_run") != "" {
			continue
		}
		switch labelValue(labels, "resource") {
		case "configmaps", "secrets":
		default:
			continue
		}
		switch labelValue(labels, "verb") {
		case "POST", "PATCH", "PUT", "DELETE":
		default:
			continue
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
		if err != nil {
			t.Fatalf("parsing %q: %v", line, err)
		}
		n += v
	}
	return n
}
