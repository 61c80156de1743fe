package certs

import (
	"bytes"
	"context"
	"fmt"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
)

// injectCABundle sets bundle as clientConfig.caBundle of every webhook in the
// configured MutatingWebhookConfiguration. It writes nothing when every
// webhook already has it, so steady-state checks cost a single GET.
func (m *Manager) injectCABundle(ctx context.Context, bundle []byte) error {
	name := m.opts.WebhookConfigName
	if name == "" {
		return nil
	}
	logger := log.FromContext(ctx).WithValues("mutatingWebhookConfiguration", name)

	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cfg := &admissionregistrationv1.MutatingWebhookConfiguration{}
		if err := m.client.Get(ctx, client.ObjectKey{Name: name}, cfg); err != nil {
			if apierrors.IsNotFound(err) {
				return fmt.Errorf("mutatingwebhookconfiguration %q not found; it must be installed before its caBundle can be injected: %w", name, err)
			}
			return fmt.Errorf("reading mutatingwebhookconfiguration %q: %w", name, err)
		}
		if hasCABundle(cfg, bundle) {
			logger.V(1).Info("caBundle already up to date")
			return nil
		}

		original := cfg.DeepCopy()
		setCABundle(cfg, bundle)
		// The optimistic lock puts the read resourceVersion into the patch, so
		// a concurrent change to the webhook list makes this fail with
		// Conflict (and be retried) instead of being merged blindly.
		patch := client.StrategicMergeFrom(original, client.MergeFromWithOptimisticLock{})
		if err := m.client.Patch(ctx, cfg, patch, client.FieldOwner(m.opts.FieldOwner)); err != nil {
			return fmt.Errorf("patching caBundle of mutatingwebhookconfiguration %q: %w", name, err)
		}
		logger.Info("injected caBundle", "webhooks", len(cfg.Webhooks))
		return nil
	})
}

// hasCABundle reports whether every webhook of cfg already trusts exactly bundle.
func hasCABundle(cfg *admissionregistrationv1.MutatingWebhookConfiguration, bundle []byte) bool {
	for i := range cfg.Webhooks {
		if !bytes.Equal(cfg.Webhooks[i].ClientConfig.CABundle, bundle) {
			return false
		}
	}
	return true
}

// setCABundle sets bundle on every webhook of cfg.
func setCABundle(cfg *admissionregistrationv1.MutatingWebhookConfiguration, bundle []byte) {
	for i := range cfg.Webhooks {
		cfg.Webhooks[i].ClientConfig.CABundle = bytes.Clone(bundle)
	}
}
