package restamp

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are the hook's Prometheus series.
type Metrics struct {
	Restamps  *prometheus.CounterVec
	Holds     *prometheus.CounterVec
	Checksums prometheus.Counter
	Missing   *prometheus.CounterVec
	// Kept counts differing stamps left alone because only confighash
	// changed (format or HMAC key), not the content; see stale.
	Kept *prometheus.CounterVec
}

// NewMetrics creates the series and registers them on reg. A series that is
// registered already (a second manager in one process) is reused.
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	m := &Metrics{
		Restamps: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "confighash_restamps_total",
			Help: "Workload pod templates re-stamped by the config-update hook, by kind and reason.",
		}, []string{"kind", "reason"}),
		Holds: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "confighash_flap_holds_total",
			Help: "Re-stamps withheld because the workload was re-stamped too often (flap hold), by kind.",
		}, []string{"kind"}),
		Checksums: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "confighash_hook_checksum_computations_total",
			Help: "Checksums computed by the config-update hook.",
		}),
		Missing: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "confighash_missing_source_total",
			Help: "Re-checks that found a required source missing and kept the stamp, by kind.",
		}, []string{"kind"}),
		Kept: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "confighash_stamps_kept_total",
			Help: "Re-checks that kept a stamp made by an older format (legacy-v1) or under another HMAC key (other-key) instead of rolling, by kind and reason.",
		}, []string{"kind", "reason"}),
	}
	var err error
	m.Restamps, err = register(reg, m.Restamps)
	if err == nil {
		m.Holds, err = register(reg, m.Holds)
	}
	if err == nil {
		m.Checksums, err = register(reg, m.Checksums)
	}
	if err == nil {
		m.Missing, err = register(reg, m.Missing)
	}
	if err == nil {
		m.Kept, err = register(reg, m.Kept)
	}
	return m, err
}

func register[C prometheus.Collector](reg prometheus.Registerer, c C) (C, error) {
	err := reg.Register(c)
	var are prometheus.AlreadyRegisteredError
	if errors.As(err, &are) {
		if existing, ok := are.ExistingCollector.(C); ok {
			return existing, nil
		}
	}
	return c, err
}
