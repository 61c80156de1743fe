package hashkey

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
)

// Check results, as metric labels.
const (
	resultSame     = "same"
	resultRestored = "restored"
	resultChanged  = "changed"
	resultError    = "error"
)

// Metrics are the key's Prometheus series.
type Metrics struct {
	// Checks counts the Keeper's reads of the key Secret by result. Alert
	// on any "restored" or "changed".
	Checks *prometheus.CounterVec
	// InUse is 1 for the key ID this replica stamps with. More than one
	// key_id across replicas for longer than an interval means they
	// disagree.
	InUse *prometheus.GaugeVec
}

// NewMetrics creates the series and registers them on reg. Series that are
// registered already (a second server in one process) are reused.
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	m := &Metrics{
		Checks: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "confighash_hmac_key_checks_total",
			Help: "Re-reads of the HMAC key Secret by result: same, restored (it was deleted and was put back), changed (it holds another key; the replica restarts), error.",
		}, []string{"result"}),
		InUse: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "confighash_hmac_key_info",
			Help: "1 for the ID of the HMAC key this replica stamps with.",
		}, []string{"key_id"}),
	}
	var err error
	m.Checks, err = register(reg, m.Checks)
	if err == nil {
		m.InUse, err = register(reg, m.InUse)
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

// A Keeper without metrics counts nothing.

func (m *Metrics) check(result string) {
	if m != nil {
		m.Checks.WithLabelValues(result).Inc()
	}
}

func (m *Metrics) keyInUse(id string) {
	if m != nil {
		m.InUse.Reset()
		m.InUse.WithLabelValues(id).Set(1)
	}
}
