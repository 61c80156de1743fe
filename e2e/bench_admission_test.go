//go:build e2e

package e2e

import (
	"fmt"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/confighash/confighash/internal/contract"
	"github.com/confighash/confighash/internal/workload"
	"github.com/confighash/confighash/webhook"
)

// benchTarget is one webhook measured: confighash, or the do-nothing floor.
type benchTarget struct {
	label   string
	webhook string
	// nsLabels select the namespace for this webhook only.
	nsLabels map[string]string
}

// TestBenchAdmission measures, with the apiserver's own admission metrics,
// what confighash costs the apiserver against a do-nothing webhook served
// on the same machine for the same rules: calls and admission time for a
// Deployment of 100 replicas (its ReplicaSet's Pods; the cluster has no
// node, so they stay Pending but are admitted all the same) and for 200
// Deployment creates one after the other. Both with the matchConditions and,
// for comparison, with them removed from both configurations. Each figure
// alternates floor and confighash twice; the best of each pair (total
// admission time of the same calls) is compared.
func TestBenchAdmission(t *testing.T) {
	benchOnly(t)
	restartWith(t)
	serveNoopWebhook(t)
	targets := []benchTarget{
		{label: "do-nothing webhook (floor)", webhook: noopWebhookName, nsLabels: map[string]string{noopNamespaceLabel: "true"}},
		{label: "confighash", webhook: webhook.Name, nsLabels: map[string]string{contract.InjectionLabel: contract.InjectionEnabled}},
	}
	fmt.Printf("\nadmission cost against a do-nothing webhook\nmachine: %s\n\n", machine())
	fmt.Printf("| matchConditions | workload | webhook | calls | admission time, total | per call | vs floor |\n|---|---|---|---|---|---|---|\n")
	t.Cleanup(func() { setMatchConditions(t, webhook.MatchConditions(workload.Kinds())) })
	for _, mc := range []bool{true, false} {
		conds, mcLabel := webhook.MatchConditions(workload.Kinds()), "on"
		if !mc {
			conds, mcLabel = nil, "removed"
		}
		setMatchConditions(t, conds)
		for _, w := range []struct {
			label string
			run   func(t *testing.T, ns string)
		}{
			{"Deployment of 100 replicas, until its 100 Pods exist", benchRollout},
			{"200 Deployment creates, one at a time", benchCreates},
		} {
			// Floor and confighash alternate twice, each in a namespace of
			// its own, so that a change in the machine's load between runs
			// shows; the best of each pair is the figure compared.
			best := map[string]float64{}
			for round := 1; round <= 2; round++ {
				var floor float64
				for _, tg := range targets {
					ns := benchNamespace(t, tg.nsLabels)
					before := readWebhookCalls(env.SpecContext(t), t, tg.webhook)
					w.run(t, ns)
					d := readWebhookCalls(env.SpecContext(t), t, tg.webhook).minus(before)
					calls, secs := total(d.Calls), total(d.Seconds)
					per, ratio := 0.0, "–"
					if calls > 0 {
						per = secs / calls
					}
					if b, ok := best[tg.webhook]; !ok || secs < b {
						best[tg.webhook] = secs
					}
					if tg.webhook == noopWebhookName {
						floor = per
					} else if floor > 0 && per > 0 {
						ratio = fmt.Sprintf("%.2f×", per/floor)
					}
					fmt.Printf("| %s | %s | %s (run %d) | %.0f | %.3f s | %.2f ms | %s |\n", mcLabel, w.label, tg.label, round, calls, secs, per*1000, ratio)
				}
			}
			if f, c := best[noopWebhookName], best[webhook.Name]; f > 0 && c > 0 {
				fmt.Printf("| %s | %s | best of two: confighash %.3f s, floor %.3f s | | | | **%.2f×** |\n", mcLabel, w.label, c, f, c/f)
			}
		}
	}
}

func total(m map[string]float64) float64 {
	var s float64
	for _, v := range m {
		s += v
	}
	return s
}

// benchNamespace is a namespace with labels, holding the ConfigMap and the
// Secret the bench workloads read, deleted when the test ends.
func benchNamespace(t *testing.T, labels map[string]string) string {
	t.Helper()
	ns := env.NewNamespace(t, false)
	n := &corev1.Namespace{}
	if err := env.Client.Get(env.SpecContext(t), client.ObjectKey{Name: ns}, n); err != nil {
		t.Fatal(err)
	}
	env.Update(t, n, func() { n.Labels = labels })
	env.Create(t, configMap(ns, "cfg", map[string]string{"a": "1", "b": "2"}))
	env.Create(t, secret(ns, "sec", map[string]string{"password": "p"}))
	// The webhook's namespace cache and the apiserver's selector see the
	// label within moments; do not measure that.
	time.Sleep(time.Second)
	return ns
}

func benchRollout(t *testing.T, ns string) {
	const replicas = 100
	d := deploymentOf(ns, "rollout", podSpec("cfg", "sec"))
	d.Spec.Replicas = ptr.To[int32](replicas)
	env.Create(t, d)
	waitPods(env.SpecContext(t), t, ns, replicas)
}

func benchCreates(t *testing.T, ns string) {
	for i := range 200 {
		d := deploymentOf(ns, fmt.Sprintf("create-%d", i), podSpec("cfg", "sec"))
		d.Spec.Replicas = ptr.To[int32](0)
		env.Create(t, d)
	}
}

// setMatchConditions sets the conditions of confighash's webhook and the
// do-nothing one alike, then gives the apiserver time to reload them.
func setMatchConditions(t *testing.T, conds []admissionregistrationv1.MatchCondition) {
	t.Helper()
	for _, name := range []string{"confighash", "confighash-bench-noop"} {
		cfg := &admissionregistrationv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: name}}
		if err := env.Client.Get(env.SpecContext(t), client.ObjectKeyFromObject(cfg), cfg); err != nil {
			continue // the noop webhook is gone at cleanup
		}
		env.Update(t, cfg, func() { cfg.Webhooks[0].MatchConditions = conds })
	}
	time.Sleep(2 * time.Second)
}
