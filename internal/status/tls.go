package status

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"
)

// parseCABundle parses a webhook caBundle: one or more PEM CERTIFICATE
// blocks and nothing else. Unless now is zero, every certificate must be
// valid at now.
func parseCABundle(bundle []byte, now time.Time) ([]*x509.Certificate, error) {
	if len(bytes.TrimSpace(bundle)) == 0 {
		return nil, errors.New("caBundle is empty: the API server would verify the webhook against its system roots, which confighash's own CA is not in")
	}
	var certs []*x509.Certificate
	rest := bundle
	for {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			break
		}
		if block.Type != "CERTIFICATE" {
			return nil, fmt.Errorf("caBundle holds a PEM %s block; want CERTIFICATE only", block.Type)
		}
		cert, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("caBundle certificate %d: %w", len(certs)+1, err)
		}
		certs = append(certs, cert)
	}
	if len(certs) == 0 {
		return nil, errors.New("caBundle holds no PEM certificate")
	}
	if len(bytes.TrimSpace(rest)) > 0 {
		return nil, errors.New("caBundle has trailing data that is not PEM")
	}
	if !now.IsZero() {
		for _, c := range certs {
			if now.After(c.NotAfter) {
				return certs, fmt.Errorf("caBundle certificate %s expired at %s", c.Subject, c.NotAfter.UTC().Format(time.RFC3339))
			}
			if now.Before(c.NotBefore) {
				return certs, fmt.Errorf("caBundle certificate %s is not valid before %s", c.Subject, c.NotBefore.UTC().Format(time.RFC3339))
			}
		}
	}
	return certs, nil
}

// describeCerts summarises a parsed caBundle.
func describeCerts(certs []*x509.Certificate) string {
	parts := make([]string, len(certs))
	for i, c := range certs {
		parts[i] = fmt.Sprintf("%s valid until %s", c.Subject, c.NotAfter.UTC().Format(time.RFC3339))
	}
	return fmt.Sprintf("%d PEM certificate(s): %s", len(certs), strings.Join(parts, "; "))
}

func poolOf(certs []*x509.Certificate) *x509.CertPool {
	pool := x509.NewCertPool()
	for _, c := range certs {
		pool.AddCert(c)
	}
	return pool
}

// dialTLS completes a TLS handshake with addr, verifying the chain against
// roots and the certificate against serverName, and returns the leaf.
func dialTLS(ctx context.Context, addr, serverName string, roots *x509.CertPool, timeout time.Duration) (*x509.Certificate, error) {
	d := &tls.Dialer{
		NetDialer: &net.Dialer{Timeout: timeout},
		Config:    &tls.Config{RootCAs: roots, ServerName: serverName, MinVersion: tls.VersionTLS12},
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	state := conn.(*tls.Conn).ConnectionState()
	if len(state.PeerCertificates) == 0 {
		return nil, errors.New("no serving certificate")
	}
	return state.PeerCertificates[0], nil
}
