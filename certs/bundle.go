package certs

import (
	"bytes"
	"encoding/pem"
	"fmt"
	"time"
)

// caBundle returns the PEM bundle the apiserver must trust for the
// certificates described by the Secret data: the current CA and, after a
// rotation, the previous CA while it is unexpired. Every replica computes it
// from the same Secret, so they agree on the bundle and never undo each
// other's injection.
func caBundle(data map[string][]byte, now time.Time) ([]byte, error) {
	current, err := parseCertPEM(data[SecretCACertKey])
	if err != nil {
		return nil, fmt.Errorf("parsing %s: %w", SecretCACertKey, err)
	}
	// Re-encode rather than copy bytes so the bundle is canonical (no
	// stray text or whitespace differences that would cause needless patches).
	var buf bytes.Buffer
	_ = pem.Encode(&buf, &pem.Block{Type: "CERTIFICATE", Bytes: current.Raw})
	if prev, ok := usablePreviousCA(data[SecretPreviousCACertKey], now); ok && !bytes.Equal(prev.Raw, current.Raw) {
		_ = pem.Encode(&buf, &pem.Block{Type: "CERTIFICATE", Bytes: prev.Raw})
	}
	return buf.Bytes(), nil
}
