package deploy

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"k8s.io/client-go/kubernetes"
)

// webhookAdmissions are the apiserver's own counts for one mutating
// webhook, read from its /metrics: how often it called the webhook, and how
// often a failed call was ignored (failurePolicy Ignore) so that the
// request went on without the webhook's mutation. A counter the apiserver
// has not incremented yet is absent from /metrics, and reads as zero.
type webhookAdmissions struct {
	// Calls is apiserver_admission_webhook_admission_duration_seconds_count,
	// summed over operations and outcomes.
	Calls float64
	// FailOpen is apiserver_admission_webhook_fail_open_count.
	FailOpen float64
}

// The apiserver's metrics the counts are read from.
const (
	webhookCallsMetric    = "apiserver_admission_webhook_admission_duration_seconds_count"
	webhookFailOpenMetric = "apiserver_admission_webhook_fail_open_count"
)

// readWebhookAdmissions scrapes the apiserver for the mutating webhook
// named name.
func readWebhookAdmissions(ctx context.Context, admin kubernetes.Interface, name string) (webhookAdmissions, error) {
	raw, err := admin.Discovery().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return webhookAdmissions{}, fmt.Errorf("reading the apiserver's metrics: %w", err)
	}
	return parseWebhookAdmissions(string(raw), name)
}

func parseWebhookAdmissions(text, name string) (webhookAdmissions, error) {
	var w webhookAdmissions
	for _, line := range strings.Split(text, "\n") {
		var into *float64
		switch {
		case strings.HasPrefix(line, webhookCallsMetric+"{"):
			into = &w.Calls
		case strings.HasPrefix(line, webhookFailOpenMetric+"{"):
			into = &w.FailOpen
		default:
			continue
		}
		labels, value, ok := strings.Cut(line[strings.IndexByte(line, '{'):], "} ")
		if !ok || !strings.Contains(labels, `name="`+name+`"`) || !strings.Contains(labels, `type="admit"`) {
			continue
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
		if err != nil {
			return w, fmt.Errorf("parsing %q: %w", line, err)
		}
		*into += v
	}
	return w, nil
}
