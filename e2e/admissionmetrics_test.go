//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"k8s.io/client-go/kubernetes"
)

// webhookCalls are the apiserver's own counts of calls to one admission
// webhook, read from its /metrics. The apiserver records one observation
// per call it makes, so a call skipped by a matchCondition or a selector
// is not counted, whatever the webhook would have answered.
type webhookCalls struct {
	// Calls by operation (CREATE, UPDATE).
	Calls map[string]float64
	// Seconds is the summed admission time by operation, as the apiserver
	// measured it (round trip to the webhook included).
	Seconds map[string]float64
}

// admissionMetric is the apiserver's per-webhook admission histogram.
const admissionMetric = "apiserver_admission_webhook_admission_duration_seconds"

// readWebhookCalls scrapes the apiserver for the webhook named name.
func readWebhookCalls(ctx context.Context, t *testing.T, name string) webhookCalls {
	t.Helper()
	w, err := parseWebhookCalls(apiserverMetrics(ctx, t), name)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// apiserverMetrics is the text of the apiserver's /metrics.
func apiserverMetrics(ctx context.Context, t *testing.T) string {
	t.Helper()
	cs, err := kubernetes.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := cs.RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		t.Fatalf("reading apiserver metrics: %v", err)
	}
	return string(raw)
}

func parseWebhookCalls(text, name string) (webhookCalls, error) {
	w := webhookCalls{Calls: map[string]float64{}, Seconds: map[string]float64{}}
	for _, line := range strings.Split(text, "\n") {
		var into map[string]float64
		switch {
		case strings.HasPrefix(line, admissionMetric+"_count{"):
			into = w.Calls
		case strings.HasPrefix(line, admissionMetric+"_sum{"):
			into = w.Seconds
		default:
			continue
		}
		labels, value, ok := strings.Cut(line[strings.IndexByte(line, '{'):], "} ")
		if !ok || !strings.Contains(labels, `name="`+name+`"`) || !strings.Contains(labels, `type="admit"`) {
			continue
		}
		op := labelValue(labels, "operation")
		v, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
		if err != nil {
			return w, fmt.Errorf("parsing %q: %w", line, err)
		}
		into[op] += v
	}
	return w, nil
}

func labelValue(labels, key string) string {
	_, rest, ok := strings.Cut(labels, key+`="`)
	if !ok {
		return ""
	}
	v, _, _ := strings.Cut(rest, `"`)
	return v
}

// minus is the calls and time between two reads.
func (w webhookCalls) minus(before webhookCalls) webhookCalls {
	d := webhookCalls{Calls: map[string]float64{}, Seconds: map[string]float64{}}
	for op, v := range w.Calls {
		d.Calls[op] = v - before.Calls[op]
	}
	for op, v := range w.Seconds {
		d.Seconds[op] = v - before.Seconds[op]
	}
	return d
}
