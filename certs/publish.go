package certs

import (
	"bytes"
	"context"
	"crypto/x509"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
)

// ConfigMapCABundleKey is the key of Options.CABundleConfigMap that holds
// the PEM caBundle, as in the kube-root-ca.crt ConfigMap.
const ConfigMapCABundleKey = "ca.crt"

// bundleConfigMapKey is the ConfigMap the bundle is published in.
func (m *Manager) bundleConfigMapKey() types.NamespacedName {
	return types.NamespacedName{Namespace: m.opts.SecretKey.Namespace, Name: m.opts.CABundleConfigMap}
}

// publishCABundle writes bundle into the CABundleConfigMap, for clients
// other than the apiserver (Prometheus scraping the metrics, served with the
// same certificate) that must verify the serving certificate without reading
// the Secret and its CA key. It writes nothing when the ConfigMap already
// holds bundle.
func (m *Manager) publishCABundle(ctx context.Context, bundle []byte) error {
	if m.opts.CABundleConfigMap == "" {
		return nil
	}
	key := m.bundleConfigMapKey()
	lostRace := func(err error) bool { return apierrors.IsConflict(err) || apierrors.IsAlreadyExists(err) }
	return retry.OnError(retry.DefaultRetry, lostRace, func() error {
		cm := &corev1.ConfigMap{}
		err := m.client.Get(ctx, key, cm)
		switch {
		case apierrors.IsNotFound(err):
			cm = &corev1.ConfigMap{
				ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name},
				Data:       map[string]string{ConfigMapCABundleKey: string(bundle)},
			}
			if err := m.client.Create(ctx, cm, client.FieldOwner(m.opts.FieldOwner)); err != nil {
				return fmt.Errorf("creating configmap %s: %w", key, err)
			}
		case err != nil:
			return fmt.Errorf("reading configmap %s: %w", key, err)
		case bytes.Equal([]byte(cm.Data[ConfigMapCABundleKey]), bundle):
			return nil
		default:
			if cm.Data == nil {
				cm.Data = map[string]string{}
			}
			cm.Data[ConfigMapCABundleKey] = string(bundle)
			// cm carries the read resourceVersion: a concurrent writer
			// makes this fail with Conflict, and it is retried.
			if err := m.client.Update(ctx, cm, client.FieldOwner(m.opts.FieldOwner)); err != nil {
				return fmt.Errorf("updating configmap %s: %w", key, err)
			}
		}
		log.FromContext(ctx).Info("published caBundle", "configMap", key.String())
		return nil
	})
}

// bundleConfigMapTrust returns which CAs the CABundleConfigMap holds, as
// readTrust does for the webhook configuration: a rotation switches only
// once both trust the next CA. Without a ConfigMap every CA counts.
func (m *Manager) bundleConfigMapTrust(ctx context.Context) trustFunc {
	if m.opts.CABundleConfigMap == "" {
		return func(*x509.Certificate) bool { return true }
	}
	cm := &corev1.ConfigMap{}
	if err := m.client.Get(ctx, m.bundleConfigMapKey(), cm); err != nil {
		log.FromContext(ctx).V(1).Info("cannot read the caBundle ConfigMap; a CA rotation waits", "configMap", m.bundleConfigMapKey().String(), "error", err.Error())
		return func(*x509.Certificate) bool { return false }
	}
	bundle := []byte(cm.Data[ConfigMapCABundleKey])
	return func(ca *x509.Certificate) bool { return bundleHolds(bundle, ca) }
}
