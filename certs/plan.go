package certs

import (
	"encoding/pem"
	"fmt"
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
}

// planSecretData returns the Secret data that satisfies spec at now, and the
// reasons it differs from cur. No reasons means cur is fine as it is and must
// not be written: another replica may have produced it, and rewriting a valid
// certificate would only make every replica reload.
//
// Keys of cur that this package does not own are preserved.
func planSecretData(cur map[string][]byte, spec issueSpec, now time.Time) (map[string][]byte, []string, error) {
	next := maps.Clone(cur)
	if next == nil {
		next = map[string][]byte{}
	}
	var reasons []string

	var ca *keyPair
	caReason := caRenewalReason(cur[SecretCACertKey], cur[SecretCAKeyKey], now, spec.caRenewBefore)
	if caReason != "" {
		reasons = append(reasons, caReason)
		var err error
		ca, err = newCA(fmt.Sprintf("%s@%d", spec.caCommonName, now.Unix()), spec.caValidity, now)
		if err != nil {
			return nil, nil, err
		}
		// Serving certificates issued by the outgoing CA are still being
		// served by replicas that have not picked up the new Secret yet, so
		// the outgoing CA stays trusted until it expires.
		if old, ok := usablePreviousCA(cur[SecretCACertKey], now); ok {
			next[SecretPreviousCACertKey] = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: old.Raw})
		} else {
			delete(next, SecretPreviousCACertKey)
		}
		next[SecretCACertKey] = ca.certPEM
		next[SecretCAKeyKey] = ca.keyPEM
	} else {
		var err error
		ca, err = loadKeyPair(cur[SecretCACertKey], cur[SecretCAKeyKey])
		if err != nil {
			// caRenewalReason has just parsed both; this cannot happen.
			return nil, nil, fmt.Errorf("loading CA: %w", err)
		}
		if prev, present := cur[SecretPreviousCACertKey]; present {
			if _, ok := usablePreviousCA(prev, now); !ok {
				reasons = append(reasons, "previous CA expired or unusable; dropping it")
				delete(next, SecretPreviousCACertKey)
			}
		}
	}

	servingReason := servingRenewalReason(cur[SecretCertKey], cur[SecretKeyKey], ca.cert, spec.dnsNames, spec.ips, now, spec.certRenewBefore)
	if caReason != "" {
		servingReason = "CA renewed"
	}
	if servingReason != "" {
		reasons = append(reasons, servingReason)
		serving, err := newServingCert(ca, spec.dnsNames, spec.ips, spec.certValidity, now)
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
