package restamp

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// The series are registered on the caller's registry, once: a second
// registration fails instead of sharing counts between two hooks.
func TestNewMetricsRegistersOnce(t *testing.T) {
	reg := prometheus.NewRegistry()
	if _, err := NewMetrics(reg); err != nil {
		t.Fatal(err)
	}
	if _, err := NewMetrics(reg); err == nil {
		t.Error("second NewMetrics on one registry succeeded")
	}
	// A hook without metrics counts nothing, and does not panic.
	var m *Metrics
	m.restamped("Deployment", restampChanged)
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
