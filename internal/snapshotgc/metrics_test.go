package snapshotgc

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// TestMetricsCountPerNamespace: the gauge follows adds and deletes, and a
// namespace's series goes with its last snapshot.
func TestMetricsCountPerNamespace(t *testing.T) {
	m, err := NewMetrics(prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	m.count("a", 1)
	m.count("a", 1)
	m.count("b", 1)
	if got := testutil.ToFloat64(m.Snapshots.WithLabelValues("a")); got != 2 {
		t.Fatalf("a: %v", got)
	}
	m.count("b", -1)
	if n := testutil.CollectAndCount(m.Snapshots); n != 1 {
		t.Fatalf("%d series after b's last snapshot went", n)
	}
	var none *Metrics
	none.count("a", 1) // a Controller without metrics
}
