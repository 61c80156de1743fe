package certs

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// ExpiryMetric is the series NewMetrics registers.
const ExpiryMetric = "confighash_webhook_serving_cert_expiry_timestamp_seconds"

// NewMetrics registers, on reg, a gauge of when the serving certificate m
// put in place expires. It exists only where a Manager runs
// (--cert-mode=self), which is where an expiry means confighash's own
// renewal failed: cert-manager watches its certificates itself. The value
// is read at scrape time, so it follows every renewal without a hook in
// Ensure; 0 until the first Ensure completes.
func NewMetrics(reg prometheus.Registerer, m *Manager) error {
	g := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: ExpiryMetric,
		Help: "When the webhook's serving certificate in place expires, in Unix seconds (--cert-mode=self only; 0 before the first one is in place).",
	}, m.servingExpiry)
	if err := reg.Register(g); err != nil {
		return fmt.Errorf("registering certificate metrics: %w", err)
	}
	return nil
}

// servingExpiry is the NotAfter of the certificate in place, in Unix
// seconds, or 0.
func (m *Manager) servingExpiry() float64 {
	m.stateMu.RLock()
	defer m.stateMu.RUnlock()
	if m.readyUntil.IsZero() {
		return 0
	}
	return float64(m.readyUntil.Unix())
}
