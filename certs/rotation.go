package certs

import (
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"time"
)

// A CA rotation goes through the Secret in stages, so that the apiserver
// never meets a serving certificate it does not trust yet, and never trusts
// an old CA for longer than it must:
//
//  1. publish: a next CA is issued into ca-next.crt/ca-next.key and goes
//     into the caBundle beside the current CA; nothing is signed with it.
//  2. observe: once a replica reads the next CA back from every webhook of
//     the MutatingWebhookConfiguration (and the CABundleConfigMap, if
//     any), it records the time
//     (ca-next.trusted-since). A later read without it clears the time.
//  3. switch: CAPropagationDelay after that, with the next CA still in the
//     configuration, it becomes the current CA, a serving certificate is
//     issued from it, and the old CA becomes ca-previous.crt, kept until
//     ca-previous.until (CAOverlap later).
//  4. drop: after ca-previous.until, or once it expires, the old CA leaves
//     the Secret and the caBundle.
//
// Why read the configuration back, and not wait for an admission call
// that succeeds: until the switch every replica serves a certificate from
// the current CA, so a successful call proves only that the old CA is
// trusted, never the new one. And a call reaches one apiserver, while an
// HA control plane has several, each loading webhook configurations from
// its own watch. Reading the object back proves it is stored (a quorum
// read), which every apiserver's watch then delivers, normally within a
// second; CAPropagationDelay covers a lagging one by a wide margin. A
// rotation comes once in years, so minutes of waiting cost nothing.
//
// When the current CA is already unusable (missing, broken, expired) there
// is nothing left to protect: it is replaced at once, by the next CA if one
// was published.

// trustFunc reports whether the apiserver's webhook configuration trusts a
// CA, as read in this pass.
type trustFunc func(ca *x509.Certificate) bool

// caPlan is the outcome of planCA.
type caPlan struct {
	ca       *keyPair // signs the serving certificate from now on
	switched bool     // ca differs from the Secret's current CA
	reasons  []string
}

// planCA updates the CA keys of next (a copy of cur) for now, and returns
// the CA that must sign the serving certificate.
func planCA(next, cur map[string][]byte, spec issueSpec, now time.Time, trusted trustFunc) (caPlan, error) {
	var p caPlan
	reason := caRenewalReason(cur[SecretCACertKey], cur[SecretCAKeyKey], now, spec.caRenewBefore)
	if reason == "" {
		ca, err := loadKeyPair(cur[SecretCACertKey], cur[SecretCAKeyKey])
		if err != nil {
			// caRenewalReason has just parsed both; this cannot happen.
			return p, fmt.Errorf("loading CA: %w", err)
		}
		p.ca = ca
		if _, pending := cur[SecretNextCACertKey]; pending {
			// A renewal window that moved (new options) left a next CA
			// that is no longer needed.
			dropNextCA(next)
			p.reasons = append(p.reasons, "next CA no longer needed; dropping it")
		}
		return p, nil
	}

	pending := usableNextCA(cur, spec, now)
	if caRenewalReason(cur[SecretCACertKey], cur[SecretCAKeyKey], now, 0) != "" {
		// Unusable now: nothing served under it can be trusted anyway.
		ca := pending
		if ca == nil {
			var err error
			if ca, err = newCA(fmt.Sprintf("%s@%d", spec.caCommonName, now.Unix()), spec.caValidity, now); err != nil {
				return p, err
			}
		}
		p.reasons = append(p.reasons, reason+"; replacing it at once")
		p.switchTo(next, cur, ca, spec, now)
		return p, nil
	}

	// Valid, but due for renewal: the staged rotation.
	current, err := loadKeyPair(cur[SecretCACertKey], cur[SecretCAKeyKey])
	if err != nil {
		return p, fmt.Errorf("loading CA: %w", err)
	}
	p.ca = current
	since, seen := parseTime(cur[SecretNextCATrustedSinceKey])
	switch {
	case pending == nil:
		ca, err := newCA(fmt.Sprintf("%s@%d", spec.caCommonName, now.Unix()), spec.caValidity, now)
		if err != nil {
			return p, err
		}
		next[SecretNextCACertKey] = ca.certPEM
		next[SecretNextCAKeyKey] = ca.keyPEM
		delete(next, SecretNextCATrustedSinceKey)
		p.reasons = append(p.reasons, reason+"; publishing the next CA in the caBundle")
	case !trusted(pending.cert):
		if _, present := cur[SecretNextCATrustedSinceKey]; present {
			delete(next, SecretNextCATrustedSinceKey)
			p.reasons = append(p.reasons, "next CA missing from the webhook configuration's caBundle; waiting for it again")
		}
	case !seen:
		next[SecretNextCATrustedSinceKey] = formatTime(now)
		p.reasons = append(p.reasons, "next CA read back from the webhook configuration's caBundle")
	case !now.Before(since.Add(spec.caPropagation)):
		p.reasons = append(p.reasons, fmt.Sprintf("next CA in the caBundle since %s; switching the serving certificate to it", formatTime(since)))
		p.switchTo(next, cur, pending, spec, now)
	}
	return p, nil
}

// switchTo makes ca the current CA of next, keeping the outgoing one (if it
// can still be trusted) for the bounded overlap.
func (p *caPlan) switchTo(next, cur map[string][]byte, ca *keyPair, spec issueSpec, now time.Time) {
	if old, ok := usablePreviousCA(cur[SecretCACertKey], now); ok && !old.Equal(ca.cert) {
		next[SecretPreviousCACertKey] = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: old.Raw})
		next[SecretPreviousCAUntilKey] = formatTime(now.Add(spec.caOverlap))
	} else {
		dropPreviousCA(next)
	}
	next[SecretCACertKey] = ca.certPEM
	next[SecretCAKeyKey] = ca.keyPEM
	dropNextCA(next)
	p.ca = ca
	p.switched = true
}

// planPreviousCA bounds the overlap of a previous CA that this pass did not
// just set: it is dropped when unusable or past ca-previous.until, and a
// previous CA without that time (kept by an older version, which kept it
// until it expired) gets one.
func planPreviousCA(next, cur map[string][]byte, spec issueSpec, now time.Time) []string {
	prev, present := cur[SecretPreviousCACertKey]
	if !present {
		if _, stray := cur[SecretPreviousCAUntilKey]; stray {
			delete(next, SecretPreviousCAUntilKey)
			return []string{"overlap time without a previous CA; dropping it"}
		}
		return nil
	}
	if _, ok := usablePreviousCA(prev, now); !ok {
		dropPreviousCA(next)
		return []string{"previous CA expired or unusable; dropping it"}
	}
	until, ok := parseTime(cur[SecretPreviousCAUntilKey])
	switch {
	case !ok:
		next[SecretPreviousCAUntilKey] = formatTime(now.Add(spec.caOverlap))
		return []string{"previous CA has no end of overlap; bounding it"}
	case !now.Before(until):
		dropPreviousCA(next)
		return []string{fmt.Sprintf("previous CA overlap ended at %s; dropping it", formatTime(until))}
	}
	return nil
}

// usableNextCA returns the published next CA when it is sound and would not
// itself be due for renewal, else nil.
func usableNextCA(data map[string][]byte, spec issueSpec, now time.Time) *keyPair {
	if caRenewalReason(data[SecretNextCACertKey], data[SecretNextCAKeyKey], now, spec.caRenewBefore) != "" {
		return nil
	}
	ca, err := loadKeyPair(data[SecretNextCACertKey], data[SecretNextCAKeyKey])
	if err != nil {
		return nil
	}
	return ca
}

func dropNextCA(data map[string][]byte) {
	delete(data, SecretNextCACertKey)
	delete(data, SecretNextCAKeyKey)
	delete(data, SecretNextCATrustedSinceKey)
}

func dropPreviousCA(data map[string][]byte) {
	delete(data, SecretPreviousCACertKey)
	delete(data, SecretPreviousCAUntilKey)
}

// Times in the Secret are RFC 3339 in UTC, to the second; replicas compare
// them with their own clocks, whose skew is far below the delays involved.
func formatTime(t time.Time) []byte { return []byte(t.UTC().Format(time.RFC3339)) }

func parseTime(b []byte) (time.Time, bool) {
	t, err := time.Parse(time.RFC3339, string(b))
	return t, err == nil && len(b) > 0
}
