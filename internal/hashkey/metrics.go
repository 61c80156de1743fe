package hashkey

import (
	"errors"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// Check results, as metric labels.
const (
	resultSame     = "same"
	resultRestored = "restored"
	resultChanged  = "changed"
	resultInvalid  = "invalid"
	resultError    = "error"
)

// Metrics are the key's Prometheus series.
type Metrics struct {
	// Checks counts the Keeper's reads of the key Secret by result. Alert
	// on any "restored", "changed" or "invalid".
	Checks *prometheus.CounterVec
	// InUse is 1 for the key ID this replica stamps with. More than one
	// key_id across replicas for longer than an interval means they
	// disagree.
	InUse *prometheus.GaugeVec
}

// NewMetrics creates the series and registers them on reg. A second
// registration on the same reg fails: each caller brings its own registry.
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	m := &Metrics{
		Checks: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "confighash_hmac_key_checks_total",
			Help: "Re-reads of the HMAC key Secret by result: same, restored (it was deleted and was put back), changed (it holds another valid key; the replica restarts onto it after its delay), invalid (it holds no usable key; the replica keeps its own), error.",
		}, []string{"result"}),
		InUse: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "confighash_hmac_key_info",
			Help: "1 for the ID of the HMAC key this replica stamps with.",
		}, []string{"key_id"}),
	}
	if err := errors.Join(reg.Register(m.Checks), reg.Register(m.InUse)); err != nil {
		return nil, fmt.Errorf("registering hmac key metrics: %w", err)
	}
	// Every child exists from the start at 0: an alert on increase() sees
	// the first restored, changed or invalid only if the series was there.
	for _, r := range []string{resultSame, resultRestored, resultChanged, resultInvalid, resultError} {
		m.Checks.WithLabelValues(r)
	}
	return m, nil
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
