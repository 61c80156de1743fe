package certs

import (
	"bytes"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"slices"
	"time"
)

// caBundle returns the PEM bundle the apiserver must trust for the
// certificates described by the Secret data: the current CA, then during a
// rotation the next CA (published before anything is signed with it), then
// the previous CA until its overlap ends or it expires. Every replica
// computes it from the same Secret, so they agree on the bundle and never
// undo each other's injection.
func caBundle(data map[string][]byte, now time.Time) ([]byte, error) {
	current, err := parseCertPEM(data[SecretCACertKey])
	if err != nil {
		return nil, fmt.Errorf("parsing %s: %w", SecretCACertKey, err)
	}
	cas := []*x509.Certificate{current}
	if next, err := parseCertPEM(data[SecretNextCACertKey]); err == nil && next.IsCA && now.Before(next.NotAfter) {
		cas = append(cas, next)
	}
	if prev, ok := usablePreviousCA(data[SecretPreviousCACertKey], now); ok && previousInOverlap(data, now) {
		cas = append(cas, prev)
	}
	// Re-encode rather than copy bytes so the bundle is canonical (no
	// stray text or whitespace differences that would cause needless patches).
	var buf bytes.Buffer
	for i, ca := range cas {
		if slices.ContainsFunc(cas[:i], ca.Equal) {
			continue
		}
		_ = pem.Encode(&buf, &pem.Block{Type: "CERTIFICATE", Bytes: ca.Raw})
	}
	return buf.Bytes(), nil
}

// previousInOverlap reports whether the previous CA's overlap lasts at now.
// Without an end (a Secret from an older version) it lasts until the next
// check writes one.
func previousInOverlap(data map[string][]byte, now time.Time) bool {
	until, ok := parseTime(data[SecretPreviousCAUntilKey])
	return !ok || now.Before(until)
}
