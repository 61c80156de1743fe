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
	m.restamped("Deployment", "changed")
	m.held("Deployment")
	m.checksum()
	m.missing("Deployment")
	m.kept("Deployment", keptOtherKey)
}
