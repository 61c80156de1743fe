//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/confighash/confighash/internal/contract"
	"github.com/confighash/confighash/webhook"
)

// benchCreateRounds is how many times TestBenchAdmissionCreates alternates
// the floor and confighash; CONFIGHASH_BENCH_ROUNDS overrides it.
const benchCreateRounds = 8

// TestBenchAdmissionCreates is the held-out check made repeatable:
// 200 Deployment creates, one at a time, each reading a ConfigMap (and a
// Secret), served by the do-nothing webhook (the floor) and by confighash,
// in alternating rounds (floor first in odd rounds, confighash first in
// even ones, so that a drift of the machine's load favours neither). Each
// round measures the apiserver's admission time per call
// (apiserver_admission_webhook_admission_duration_seconds) and the wall
// time of the 200 creates; the figures compared are the medians of the
// per-round ratios, with their spread (min–max). Two variants: every
// Deployment reads the same ConfigMap, and each reads its own (created,
// and seen by the cache, before the creates are timed).
func TestBenchAdmissionCreates(t *testing.T) {
	benchOnly(t)
	restartWith(t)
	serveNoopWebhook(t)
	rounds := benchCreateRounds
	if n, err := strconv.Atoi(os.Getenv("CONFIGHASH_BENCH_ROUNDS")); err == nil && n > 0 {
		rounds = n
	}
	targets := []benchTarget{
		{label: "floor", webhook: noopWebhookName, nsLabels: map[string]string{noopNamespaceLabel: "true"}},
		{label: "confighash", webhook: webhook.Name, nsLabels: map[string]string{contract.InjectionLabel: contract.InjectionEnabled}},
	}
	fmt.Printf("\n200 Deployment creates against a do-nothing webhook, %d rounds\nmachine: %s\n\n", rounds, machine())
	fmt.Printf("| ConfigMap | round | floor per call | confighash per call | ratio | floor wall | confighash wall | ratio |\n|---|---|---|---|---|---|---|---|\n")
	for _, own := range []bool{false, true} {
		variant := "one shared"
		if own {
			variant = "one each"
		}
		var perRatios, wallRatios []float64
		var getStats []getLatency
		for round := 1; round <= rounds; round++ {
			per, wall := map[string]float64{}, map[string]float64{}
			order := targets
			if round%2 == 0 {
				order = []benchTarget{targets[1], targets[0]}
			}
			for _, tg := range order {
				ns := benchNamespace(t, tg.nsLabels)
				if own {
					for i := range 200 {
						env.Create(t, configMap(ns, fmt.Sprintf("cfg-%d", i), map[string]string{"a": "1", "b": strconv.Itoa(i)}))
					}
					time.Sleep(time.Second)
				}
				before := readWebhookCalls(env.SpecContext(t), t, tg.webhook)
				gets := readGetLatency(t)
				start := time.Now()
				for i := range 200 {
					cm := "cfg"
					if own {
						cm = fmt.Sprintf("cfg-%d", i)
					}
					d := deploymentOf(ns, fmt.Sprintf("create-%d", i), podSpec(cm, "sec"))
					d.Spec.Replicas = ptr.To[int32](0)
					env.Create(t, d)
				}
				wall[tg.webhook] = time.Since(start).Seconds()
				if tg.webhook == webhook.Name {
					getStats = append(getStats, readGetLatency(t).minus(gets))
				}
				d := readWebhookCalls(env.SpecContext(t), t, tg.webhook).minus(before)
				if c := total(d.Calls); c > 0 {
					per[tg.webhook] = total(d.Seconds) / c
				}
			}
			f, c := per[noopWebhookName], per[webhook.Name]
			fw, cw := wall[noopWebhookName], wall[webhook.Name]
			if f == 0 || c == 0 {
				t.Fatalf("round %d: no admission calls measured (floor %v, confighash %v)", round, f, c)
			}
			perRatios, wallRatios = append(perRatios, c/f), append(wallRatios, cw/fw)
			fmt.Printf("| %s | %d | %.2f ms | %.2f ms | %.2f× | %.3f s | %.3f s | %.2f× |\n", variant, round, f*1000, c*1000, c/f, fw, cw, cw/fw)
		}
		fmt.Printf("| %s | median (min–max) of %d | | | **%s** | | | **%s** |\n", variant, rounds, spread(perRatios), spread(wallRatios))
		var sum getLatency
		for _, g := range getStats {
			sum = sum.plus(g)
		}
		fmt.Printf("| %s | during the confighash runs: %s | | | | | | |\n", variant, sum)
	}
}

// spread is "median× (min–max)".
func spread(v []float64) string {
	s := slices.Clone(v)
	slices.Sort(s)
	m := s[len(s)/2]
	if len(s)%2 == 0 {
		m = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return fmt.Sprintf("%.2f× (%.2f–%.2f)", m, s[0], s[len(s)-1])
}

// getLatency is what the apiserver measured of ConfigMap GETs (confighash's
// live reads; nothing else GETs ConfigMaps during the creates): its own
// request time and the etcd part of it, summed, with their counts; and of
// ConfigMap LISTs (sources.Versions', and the fill of a namespace newly
// served).
type getLatency struct {
	requests, requestSecs, etcd, etcdSecs float64
	lists, listSecs                       float64
}

func (g getLatency) minus(o getLatency) getLatency {
	return getLatency{g.requests - o.requests, g.requestSecs - o.requestSecs, g.etcd - o.etcd, g.etcdSecs - o.etcdSecs, g.lists - o.lists, g.listSecs - o.listSecs}
}

func (g getLatency) plus(o getLatency) getLatency {
	return getLatency{g.requests + o.requests, g.requestSecs + o.requestSecs, g.etcd + o.etcd, g.etcdSecs + o.etcdSecs, g.lists + o.lists, g.listSecs + o.listSecs}
}

func (g getLatency) String() string {
	mean := func(secs, n float64) float64 {
		if n == 0 {
			return 0
		}
		return secs / n * 1000
	}
	return fmt.Sprintf("%.0f ConfigMap GETs, apiserver %.2f ms each, of which etcd %.2f ms (%.0f etcd reads); %.0f ConfigMap LISTs, apiserver %.2f ms each",
		g.requests, mean(g.requestSecs, g.requests), mean(g.etcdSecs, g.etcd), g.etcd, g.lists, mean(g.listSecs, g.lists))
}

// readGetLatency scrapes the apiserver's request and etcd histograms for
// GETs of ConfigMaps.
func readGetLatency(t *testing.T) getLatency {
	t.Helper()
	cs, err := kubernetes.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := cs.RESTClient().Get().AbsPath("/metrics").DoRaw(env.SpecContext(t))
	if err != nil {
		t.Fatalf("reading apiserver metrics: %v", err)
	}
	var g getLatency
	for _, line := range strings.Split(string(raw), "\n") {
		name, rest, ok := strings.Cut(line, "{")
		if !ok {
			continue
		}
		labels, value, ok := strings.Cut(rest, "} ")
		if !ok {
			continue
		}
		var into *float64
		switch {
		case name == "apiserver_request_duration_seconds_count" && isConfigMapGet(labels):
			into = &g.requests
		case name == "apiserver_request_duration_seconds_sum" && isConfigMapGet(labels):
			into = &g.requestSecs
		case name == "apiserver_request_duration_seconds_count" && isConfigMapList(labels):
			into = &g.lists
		case name == "apiserver_request_duration_seconds_sum" && isConfigMapList(labels):
			into = &g.listSecs
		case name == "etcd_request_duration_seconds_count" && isEtcdConfigMapGet(labels):
			into = &g.etcd
		case name == "etcd_request_duration_seconds_sum" && isEtcdConfigMapGet(labels):
			into = &g.etcdSecs
		default:
			continue
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
		if err != nil {
			t.Fatalf("parsing %q: %v", line, err)
		}
		*into += v
	}
	return g
}

func isConfigMapGet(labels string) bool {
	return labelValue(labels, "verb") == "GET" && labelValue(labels, "resource") == "configmaps"
}

func isConfigMapList(labels string) bool {
	return labelValue(labels, "verb") == "LIST" && labelValue(labels, "resource") == "configmaps"
}

func isEtcdConfigMapGet(labels string) bool {
	return labelValue(labels, "operation") == "get" && labelValue(labels, "resource") == "configmaps"
}
