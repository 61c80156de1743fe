package app

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"

	"github.com/confighash/confighash/webhook"
)

// clientAuth is how the webhook tells the apiserver from other callers:
// the TLS server asks every caller for a client certificate and verifies
// one that is given against the CAs of --webhook-client-ca-file (one that
// does not verify fails the handshake), and callers accepts only a verified
// certificate with one of --webhook-client-names. A caller without a
// certificate still completes the handshake (the liveness check is one),
// and is answered, but with nothing that depends on its request (see
// webhook.Callers).
type clientAuth struct {
	tlsOpt  func(*tls.Config)
	callers *webhook.Callers
}

// loadClientAuth reads --webhook-client-ca-file, once: a changed bundle
// takes effect at the next start. Without the flag it returns nil, and the
// webhook answers every caller.
func loadClientAuth(o Options) (*clientAuth, error) {
	if o.WebhookClientCAFile == "" {
		return nil, nil
	}
	pem, err := os.ReadFile(o.WebhookClientCAFile)
	if err != nil {
		return nil, fmt.Errorf("--webhook-client-ca-file: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("--webhook-client-ca-file %s: no PEM certificate in it", o.WebhookClientCAFile)
	}
	return &clientAuth{
		tlsOpt: func(c *tls.Config) {
			c.ClientCAs = pool
			c.ClientAuth = tls.VerifyClientCertIfGiven
		},
		callers: &webhook.Callers{Names: o.WebhookClientNames},
	}, nil
}

// tlsOpts are the webhook server's TLS options for a.
func (a *clientAuth) tlsOpts() []func(*tls.Config) {
	if a == nil {
		return nil
	}
	return []func(*tls.Config){a.tlsOpt}
}

// webhookCallers is the handler's Callers for a: nil answers everyone.
func (a *clientAuth) webhookCallers() *webhook.Callers {
	if a == nil {
		return nil
	}
	return a.callers
}
