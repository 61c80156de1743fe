package certs

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
)

// reconcileSecret makes the Secret hold a valid CA and serving certificate
// and returns its data.
//
// Replicas race on this Secret. Creating fails with AlreadyExists and updating
// with Conflict when another replica got there first; both are retried from a
// fresh read, and since that replica just wrote valid certificates the retry
// normally finds nothing to do. A valid Secret is never rewritten.
func (m *Manager) reconcileSecret(ctx context.Context, trusted trustFunc) (map[string][]byte, error) {
	key := m.opts.SecretKey
	logger := log.FromContext(ctx).WithValues("secret", key.String())
	lostRace := func(err error) bool { return apierrors.IsConflict(err) || apierrors.IsAlreadyExists(err) }

	var data map[string][]byte
	err := retry.OnError(retry.DefaultRetry, lostRace, func() error {
		secret := &corev1.Secret{}
		err := m.client.Get(ctx, key, secret)
		exists := err == nil
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("reading secret %s: %w", key, err)
		}

		next, reasons, err := planSecretData(secret.Data, m.spec, m.now(), trusted)
		if err != nil {
			return fmt.Errorf("issuing certificates for secret %s: %w", key, err)
		}
		if exists && len(reasons) == 0 {
			logger.V(1).Info("certificates in secret are valid")
			data = secret.Data
			return nil
		}

		if !exists {
			secret = &corev1.Secret{
				ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name},
				// kubernetes.io/tls documents tls.crt/tls.key; the CA keys are
				// extra data, which that type allows.
				Type: corev1.SecretTypeTLS,
				Data: next,
			}
			if err := m.client.Create(ctx, secret, client.FieldOwner(m.opts.FieldOwner)); err != nil {
				return fmt.Errorf("creating secret %s: %w", key, err)
			}
			logger.Info("created certificate secret", "reasons", reasons)
			data = next
			return nil
		}

		// secret carries the resourceVersion we read, so Update fails with
		// Conflict instead of overwriting a concurrent writer.
		secret.Data = next
		if err := m.client.Update(ctx, secret, client.FieldOwner(m.opts.FieldOwner)); err != nil {
			return fmt.Errorf("updating secret %s: %w", key, err)
		}
		logger.Info("renewed certificates in secret", "reasons", reasons)
		data = next
		return nil
	})
	if err != nil {
		return nil, err
	}
	return data, nil
}
