package certs

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
)

// rotationPoll is how soon a check follows one that published a next CA
// but has not read it back from the webhook configuration yet.
const rotationPoll = 30 * time.Second

// readTrust reads the webhook configuration and the CABundleConfigMap and
// returns which CAs every one of its webhooks, and the ConfigMap, trusts:
// what a CA rotation waits for before it switches.
//
// Without a configuration to manage (WebhookConfigName empty) the caller
// injects the bundle itself, so every CA counts as trusted and a rotation
// waits only CAPropagationDelay. A configuration that cannot be read trusts
// nothing new: the rotation waits, the current certificate stays.
func (m *Manager) readTrust(ctx context.Context) trustFunc {
	webhooks, configMap := m.webhookTrust(ctx), m.bundleConfigMapTrust(ctx)
	return func(ca *x509.Certificate) bool { return webhooks(ca) && configMap(ca) }
}

// webhookTrust returns which CAs every webhook of the configuration trusts.
func (m *Manager) webhookTrust(ctx context.Context) trustFunc {
	name := m.opts.WebhookConfigName
	if name == "" {
		return func(*x509.Certificate) bool { return true }
	}
	cfg := &admissionregistrationv1.MutatingWebhookConfiguration{}
	if err := m.client.Get(ctx, client.ObjectKey{Name: name}, cfg); err != nil {
		log.FromContext(ctx).V(1).Info("cannot read the webhook configuration; a CA rotation waits", "mutatingWebhookConfiguration", name, "error", err.Error())
		return func(*x509.Certificate) bool { return false }
	}
	return func(ca *x509.Certificate) bool {
		for i := range cfg.Webhooks {
			if !bundleHolds(cfg.Webhooks[i].ClientConfig.CABundle, ca) {
				return false
			}
		}
		return len(cfg.Webhooks) > 0
	}
}

// bundleHolds reports whether the PEM bundle holds ca.
func bundleHolds(bundle []byte, ca *x509.Certificate) bool {
	for {
		var block *pem.Block
		block, bundle = pem.Decode(bundle)
		if block == nil {
			return false
		}
		if c, err := x509.ParseCertificate(block.Bytes); err == nil && c.Equal(ca) {
			return true
		}
	}
}

// rotationDue returns when the next stage of a rotation in data can happen
// (a switch, the end of an overlap), or the zero time when none is under
// way, so that Start checks then rather than a CheckInterval later.
func rotationDue(data map[string][]byte, spec issueSpec, now time.Time) time.Time {
	var due []time.Time
	if _, pending := data[SecretNextCACertKey]; pending {
		if since, ok := parseTime(data[SecretNextCATrustedSinceKey]); ok {
			due = append(due, since.Add(spec.caPropagation))
		} else {
			due = append(due, now.Add(rotationPoll))
		}
	}
	if _, present := data[SecretPreviousCACertKey]; present {
		if until, ok := parseTime(data[SecretPreviousCAUntilKey]); ok {
			due = append(due, until)
		}
	}
	var first time.Time
	for _, t := range due {
		if first.IsZero() || t.Before(first) {
			first = t
		}
	}
	return first
}
