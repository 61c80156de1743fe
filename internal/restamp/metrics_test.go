package restamp

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"golang.org/x/time/rate"

	"github.com/confighash/confighash/internal/workload"
)

// A hook without metrics counts nothing, and does not panic. (That
// NewMetrics registers once is TestNewMetricsRegistersOnce in
// cmd/confighash/app, for every package.)
func TestNilMetricsCountNothing(t *testing.T) {
	var m *Metrics
	m.restamped("Deployment", "default", restampChanged)
	m.held("Deployment")
	m.checksum()
	m.missing("Deployment")
	m.kept("Deployment", keptOtherKey)
}

// The label values are public: dashboards and alerts select on them and
// docs/metrics.md lists them, so renaming one is a breaking change, noted in
// CHANGELOG.md.
func TestLabelValuesArePublic(t *testing.T) {
	for _, tc := range []struct{ got, want string }{
		{restampChanged, "changed"},
		{restampFirstStamp, "first_stamp"},
		{restampRecheck, "recheck"},
		{keptOtherKey, "other_key"},
		{keptCacheBehind, "cache_behind"},
		{keptIgnoreToggled, "ignore_toggled"},
		{keptIgnoredSource, "ignored_source"},
	} {
		if tc.got != tc.want {
			t.Errorf("label value %q, want %q", tc.got, tc.want)
		}
	}
}

// TestCountersStartAtZero: every counter has its children for each kind
// from the start, at 0, so that an alert on increase() sees the first event.
func TestCountersStartAtZero(t *testing.T) {
	m, err := NewMetrics(prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	kinds, err := workload.NewRegistry()
	if err != nil {
		t.Fatal(err)
	}
	m.zero(kinds.Mutable())
	n := len(kinds.Mutable())
	for name, tc := range map[string]struct {
		c    prometheus.Collector
		want int
	}{
		"kept":    {m.Kept, 4 * n},
		"holds":   {m.Holds, n},
		"missing": {m.Missing, n},
		"halted":  {m.Halted, n},
	} {
		if got := testutil.CollectAndCount(tc.c); got != tc.want || testutil.ToFloat64(sumOf(t, tc.c)) != 0 {
			t.Errorf("%s: %d series, want %d, all 0", name, got, tc.want)
		}
	}
	if n == 0 {
		t.Fatal("no kinds")
	}
	var nilMetrics *Metrics
	nilMetrics.zero(kinds.Mutable())
}

// sumOf is a gauge holding the sum of c's samples.
func sumOf(t *testing.T, c prometheus.Collector) prometheus.Gauge {
	t.Helper()
	reg := prometheus.NewRegistry()
	reg.MustRegister(c)
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	g := prometheus.NewGauge(prometheus.GaugeOpts{Name: "sum"})
	for _, f := range families {
		for _, s := range f.GetMetric() {
			g.Add(s.GetCounter().GetValue())
		}
	}
	return g
}

// TestBudgetGauge: the gauge reports the limiter's tokens: 0 before one is
// set, the burst when full, one less after a write.
func TestBudgetGauge(t *testing.T) {
	m, err := NewMetrics(prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	if got := testutil.ToFloat64(m.Budget); got != 0 {
		t.Errorf("before a limiter: %v", got)
	}
	// No refill, so the count is exact.
	l := rate.NewLimiter(0, 7)
	m.setBudget(l)
	if got := testutil.ToFloat64(m.Budget); got != 7 {
		t.Errorf("full budget: %v, want 7", got)
	}
	if !l.Allow() {
		t.Fatal("no token")
	}
	if got := testutil.ToFloat64(m.Budget); got != 6 {
		t.Errorf("after one write: %v, want 6", got)
	}
	var nilMetrics *Metrics
	nilMetrics.setBudget(l)
}
