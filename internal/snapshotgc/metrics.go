package snapshotgc

import (
	"fmt"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are the controller's series, kept by the leader from its
// informers.
type Metrics struct {
	// Snapshots counts the snapshots per namespace, ConfigMaps and
	// Secrets together.
	Snapshots *prometheus.GaugeVec

	mu     sync.Mutex
	counts map[string]int
}

// NewMetrics registers the controller's series on reg.
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	m := &Metrics{
		Snapshots: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "confighash_hook_snapshots",
			Help: "Snapshots of pinned config (ConfigMaps and Secrets labelled confighash.dev/snapshot) per namespace, as the leader's informers see them.",
		}, []string{"namespace"}),
		counts: map[string]int{},
	}
	if err := reg.Register(m.Snapshots); err != nil {
		return nil, fmt.Errorf("registering snapshot metrics: %w", err)
	}
	return m, nil
}

// count adds d to namespace's snapshots; a namespace's series goes with its
// last snapshot, so that deleted namespaces leave none behind. A
// Controller without metrics counts nothing.
func (m *Metrics) count(namespace string, d int) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	n := m.counts[namespace] + d
	if n <= 0 {
		delete(m.counts, namespace)
		m.Snapshots.DeleteLabelValues(namespace)
		return
	}
	m.counts[namespace] = n
	m.Snapshots.WithLabelValues(namespace).Set(float64(n))
}
