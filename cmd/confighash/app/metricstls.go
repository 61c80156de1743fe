package app

import (
	"crypto/tls"
	"fmt"
	"path/filepath"

	"sigs.k8s.io/controller-runtime/pkg/certwatcher"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/confighash/confighash/certs"
	"github.com/confighash/confighash/internal/metricsauth"
)

// Metrics are served with the webhook's own certificate, from --cert-dir:
// the self-managed one (whose CA is published in --ca-bundle-configmap) or
// cert-manager's. Its SANs are the webhook Service's DNS names, which is
// what a scraper verifies (Prometheus's tls_config.server_name) when it
// connects to a pod IP. Rotation is the webhook's: the cert dir is watched.
//
// controller-runtime's own fallback, a self-signed certificate made at
// start, cannot be verified, so every scraper had to skip verification and
// hand its token to whatever answered on the pod IP. Missing files are an
// error here, not a silent fallback.

// metricsServed reports whether a metrics server runs.
func (o Options) metricsServed() bool { return o.MetricsAddr != "0" }

// metricsCertWatcher watches the serving certificate for the metrics
// server, or returns nil when metrics are not served over HTTPS. Call it
// once the files are in place (after certs.Manager.EnsureWithRetry).
func metricsCertWatcher(o Options) (*certwatcher.CertWatcher, error) {
	if !o.MetricsSecure || !o.metricsServed() {
		return nil, nil
	}
	w, err := certwatcher.New(filepath.Join(o.CertDir, certs.CertFileName), filepath.Join(o.CertDir, certs.KeyFileName))
	if err != nil {
		return nil, fmt.Errorf("loading the metrics serving certificate from --cert-dir %s: %w", o.CertDir, err)
	}
	return w, nil
}

// metricsOptions serves metrics over HTTPS, with w's certificate, to
// callers the apiserver authenticates and allows to GET /metrics, unless
// --metrics-secure=false.
func metricsOptions(o Options, w *certwatcher.CertWatcher) metricsserver.Options {
	opts := metricsserver.Options{BindAddress: o.MetricsAddr}
	if o.MetricsSecure {
		opts.SecureServing = true
		opts.FilterProvider = metricsauth.FilterProvider
		opts.TLSOpts = []func(*tls.Config){func(c *tls.Config) {
			c.MinVersion = tls.VersionTLS12
			if w != nil {
				c.GetCertificate = w.GetCertificate
			}
		}}
	}
	return opts
}

// everyReplica runs a Runnable on every replica, not only on the leader
// (the manager's default for a Runnable that does not say).
type everyReplica struct{ manager.Runnable }

func (everyReplica) NeedLeaderElection() bool { return false }
