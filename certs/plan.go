package certs

import (
	"maps"
	"net"
	"time"
)

// issueSpec is what the CA and serving certificate must satisfy.
type issueSpec struct {
	caCommonName    string
	dnsNames        []string
	ips             []net.IP
	caValidity      time.Duration
	certValidity    time.Duration
	caRenewBefore   time.Duration
	certRenewBefore time.Duration
	caPropagation   time.Duration // see Options.CAPropagationDelay
	caOverlap       time.Duration // see Options.CAOverlap
}

// planSecretData returns the Secret data that satisfies spec at now, and the
// reasons it differs from cur. No reasons means cur is fine as it is and must
// not be written: another replica may have produced it, and rewriting a valid
// certificate would only make every replica reload.
//
// trusted says which CAs the webhook configuration's caBundle holds, as read
// in this pass; a CA rotation waits on it (see planCA).
//
// Keys of cur that this package does not own are preserved.
func planSecretData(cur map[string][]byte, spec issueSpec, now time.Time, trusted trustFunc) (map[string][]byte, []string, error) {
	next := maps.Clone(cur)
	if next == nil {
		next = map[string][]byte{}
	}

	ca, err := planCA(next, cur, spec, now, trusted)
	if err != nil {
		return nil, nil, err
	}
	reasons := ca.reasons
	if !ca.switched {
		reasons = append(reasons, planPreviousCA(next, cur, spec, now)...)
	}

	servingReason := servingRenewalReason(cur[SecretCertKey], cur[SecretKeyKey], ca.ca.cert, spec.dnsNames, spec.ips, now, spec.certRenewBefore)
	if ca.switched {
		servingReason = "CA switched"
	}
	if servingReason != "" {
		reasons = append(reasons, servingReason)
		serving, err := newServingCert(ca.ca, spec.dnsNames, spec.ips, spec.certValidity, now)
		if err != nil {
			return nil, nil, err
		}
		next[SecretCertKey] = serving.certPEM
		next[SecretKeyKey] = serving.keyPEM
	}
	return next, reasons, nil
}

// loadKeyPair parses a PEM certificate and its key.
func loadKeyPair(certPEM, keyPEM []byte) (*keyPair, error) {
	cert, err := parseCertPEM(certPEM)
	if err != nil {
		return nil, err
	}
	key, err := parseKeyPEM(keyPEM)
	if err != nil {
		return nil, err
	}
	return &keyPair{cert: cert, key: key, certPEM: certPEM, keyPEM: keyPEM}, nil
}
