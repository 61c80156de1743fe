package certs

import (
	"crypto/x509"
	"encoding/pem"
	"net"
	"testing"
	"time"
)

// testNow is a fixed clock for deterministic certificate windows.
var testNow = time.Date(2031, time.March, 14, 12, 0, 0, 0, time.UTC)

func mustCA(t *testing.T, validity time.Duration, now time.Time) *keyPair {
	t.Helper()
	ca, err := newCA("test-ca", validity, now)
	if err != nil {
		t.Fatalf("newCA: %v", err)
	}
	return ca
}

func mustServing(t *testing.T, ca *keyPair, dnsNames []string, ips []net.IP, validity time.Duration, now time.Time) *keyPair {
	t.Helper()
	kp, err := newServingCert(ca, dnsNames, ips, validity, now)
	if err != nil {
		t.Fatalf("newServingCert: %v", err)
	}
	return kp
}

func mustParseCert(t *testing.T, pemBytes []byte) *x509.Certificate {
	t.Helper()
	c, err := parseCertPEM(pemBytes)
	if err != nil {
		t.Fatalf("parseCertPEM: %v", err)
	}
	return c
}

// pemDecode is pem.Decode that returns a nil rest when no block is left.
func pemDecode(b []byte) (*pem.Block, []byte) {
	block, rest := pem.Decode(b)
	if block == nil {
		return nil, nil
	}
	return block, rest
}
