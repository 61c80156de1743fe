package webhook

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// The label values are public: dashboards and alerts select on them and
// docs/metrics.md lists them, so renaming one is a breaking change, noted in
// CHANGELOG.md.
func TestLabelValuesArePublic(t *testing.T) {
	for _, tc := range []struct{ got, want string }{
		{string(answerStamped), "stamped"},
		{string(answerRestored), "restored"},
		{string(answerUnchanged), "unchanged"},
		{string(answerError), "error"},
		{string(answerUnauthenticated), "unauthenticated"},
		{refusedTooLarge, "too_large"},
		{refusedBusy, "busy"},
		{refusedNoBuffer, "no_buffer"},
		{refusedIncomplete, "incomplete"},
		{refusedConnections, "connections"},
	} {
		if tc.got != tc.want {
			t.Errorf("label value %q, want %q", tc.got, tc.want)
		}
	}
}

// TestCountersStartAtZero: every answer outcome and refusal reason has its
// series from the start, so that an alert on increase() sees the first one.
func TestCountersStartAtZero(t *testing.T) {
	m := testMetrics(t)
	for _, o := range []outcome{answerStamped, answerRestored, answerUnchanged, answerError, answerUnauthenticated} {
		if v := testutil.ToFloat64(m.Answers.WithLabelValues(string(o))); v != 0 {
			t.Errorf("answers %s: %v", o, v)
		}
	}
	if got := testutil.CollectAndCount(m.Answers); got != 5 {
		t.Errorf("%d answer series at start, want 5", got)
	}
	if got := testutil.CollectAndCount(m.Refused); got != 5 {
		t.Errorf("%d refusal series at start, want 5", got)
	}
}

// testMetrics are the webhook's series on a registry of their own.
func testMetrics(t *testing.T) *Metrics {
	t.Helper()
	m, err := NewMetrics(prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	return m
}
