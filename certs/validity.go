package certs

import (
	"crypto/x509"
	"fmt"
	"net"
	"slices"
	"strings"
	"time"
)

// The functions in this file decide whether a certificate must be replaced.
// They are pure (no I/O, time passed in) so every rule is table-tested. Each
// returns a human-readable reason, or "" when the certificate can be kept; the
// reason ends up in the log line that announces the renewal.

// caRenewalReason says why the CA in certPEM/keyPEM must be replaced: missing,
// unparseable, key not matching, not a CA, expired, or within renewBefore of
// its expiry.
func caRenewalReason(certPEM, keyPEM []byte, now time.Time, renewBefore time.Duration) string {
	cert, reason := parsePair(certPEM, keyPEM, "CA", "CA certificate", "CA key")
	if reason != "" {
		return reason
	}
	if !cert.BasicConstraintsValid || !cert.IsCA || cert.KeyUsage&x509.KeyUsageCertSign == 0 {
		return "CA certificate is not a CA (basic constraints or cert-sign key usage missing)"
	}
	return expiryReason("CA", cert, now, renewBefore)
}

// servingRenewalReason says why the serving certificate must be replaced:
// missing, unparseable, key not matching, not signed by ca, not for server
// auth, missing a requested DNS name or IP, expired, or within renewBefore of
// its expiry.
func servingRenewalReason(certPEM, keyPEM []byte, ca *x509.Certificate, dnsNames []string, ips []net.IP, now time.Time, renewBefore time.Duration) string {
	cert, reason := parsePair(certPEM, keyPEM, "serving certificate", "serving certificate", "serving key")
	if reason != "" {
		return reason
	}
	// CheckSignatureFrom rather than x509.Verify: Verify also rejects a
	// certificate whose NotBefore is ahead of our clock, and treating clock
	// skew between replicas as "wrong CA" would make them re-issue in turn.
	if err := cert.CheckSignatureFrom(ca); err != nil {
		return fmt.Sprintf("serving certificate not signed by the current CA: %v", err)
	}
	if !slices.Contains(cert.ExtKeyUsage, x509.ExtKeyUsageServerAuth) {
		return "serving certificate lacks the server-auth extended key usage"
	}
	for _, name := range dnsNames {
		if !slices.ContainsFunc(cert.DNSNames, func(have string) bool { return strings.EqualFold(have, name) }) {
			return fmt.Sprintf("serving certificate lacks DNS name %q", name)
		}
	}
	for _, ip := range ips {
		if !slices.ContainsFunc(cert.IPAddresses, ip.Equal) {
			return fmt.Sprintf("serving certificate lacks IP address %s", ip)
		}
	}
	return expiryReason("serving certificate", cert, now, renewBefore)
}

// parsePair parses a certificate and its key, or says why they cannot be
// used: missing (pair names both), unparseable or not matching.
func parsePair(certPEM, keyPEM []byte, pair, certName, keyName string) (*x509.Certificate, string) {
	if len(certPEM) == 0 || len(keyPEM) == 0 {
		return nil, pair + " missing"
	}
	cert, err := parseCertPEM(certPEM)
	if err != nil {
		return nil, fmt.Sprintf("%s unparseable: %v", certName, err)
	}
	key, err := parseKeyPEM(keyPEM)
	if err != nil {
		return nil, fmt.Sprintf("%s unparseable: %v", keyName, err)
	}
	if !keyMatches(cert, key) {
		return nil, keyName + " does not match " + certName
	}
	return cert, ""
}

// expiryReason reports an expired certificate or one with less than
// renewBefore left.
func expiryReason(what string, cert *x509.Certificate, now time.Time, renewBefore time.Duration) string {
	switch {
	case !now.Before(cert.NotAfter):
		return fmt.Sprintf("%s expired at %s", what, cert.NotAfter.UTC().Format(time.RFC3339))
	case !now.Add(renewBefore).Before(cert.NotAfter):
		return fmt.Sprintf("%s expires at %s, within the renewal window of %s", what, cert.NotAfter.UTC().Format(time.RFC3339), renewBefore)
	}
	return ""
}

// usablePreviousCA reports whether pemBytes is a CA certificate that can still
// be trusted at now, i.e. worth keeping in the bundle after a rotation.
func usablePreviousCA(pemBytes []byte, now time.Time) (*x509.Certificate, bool) {
	if len(pemBytes) == 0 {
		return nil, false
	}
	cert, err := parseCertPEM(pemBytes)
	if err != nil || !cert.IsCA || !now.Before(cert.NotAfter) {
		return nil, false
	}
	return cert, true
}
