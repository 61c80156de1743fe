package hashkey

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// A Keeper without metrics counts nothing, and does not panic. (That
// NewMetrics registers once is TestNewMetricsRegistersOnce in
// cmd/confighash/app, for every package.)
func TestNilMetricsCountNothing(t *testing.T) {
	var m *Metrics
	m.check(resultSame)
	m.keyInUse("k")
}

// The label values are public: dashboards and alerts select on them and
// docs/metrics.md lists them, so renaming one is a breaking change, noted in
// CHANGELOG.md.
func TestLabelValuesArePublic(t *testing.T) {
	for _, tc := range []struct{ got, want string }{
		{resultSame, "same"},
		{resultRestored, "restored"},
		{resultChanged, "changed"},
		{resultInvalid, "invalid"},
		{resultError, "error"},
	} {
		if tc.got != tc.want {
			t.Errorf("label value %q, want %q", tc.got, tc.want)
		}
	}
}

// TestChecksStartAtZero: every check result has its series from the start,
// so that an alert on increase() sees the first restored, changed or
// invalid.
func TestChecksStartAtZero(t *testing.T) {
	m, err := NewMetrics(prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	if got := testutil.CollectAndCount(m.Checks); got != 5 {
		t.Errorf("%d check series at start, want 5", got)
	}
}
