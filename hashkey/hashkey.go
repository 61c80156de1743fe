package hashkey

import (
	"context"
	"crypto/rand"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/confighash/confighash/hasher"
)

// DataKey is the Secret key holding the HMAC key.
const DataKey = "hmac-key"

// minLen is the shortest key accepted: HMAC-SHA256's block of security.
const minLen = 32

// Ensure returns the key stored in the Secret at ref, creating the Secret
// with a fresh random key when it does not exist. c must be a live client:
// this runs before any cache is started.
func Ensure(ctx context.Context, c client.Client, ref types.NamespacedName) ([]byte, error) {
	s := &corev1.Secret{}
	err := c.Get(ctx, ref, s)
	if apierrors.IsNotFound(err) {
		if s, err = create(ctx, c, ref); err != nil {
			return nil, fmt.Errorf("creating hmac key secret %s: %w", ref, err)
		}
	} else if err != nil {
		return nil, fmt.Errorf("reading hmac key secret %s: %w", ref, err)
	}
	key := s.Data[DataKey]
	if len(key) < minLen {
		return nil, fmt.Errorf("hmac key secret %s: key %q has %d bytes, want at least %d", ref, DataKey, len(key), minLen)
	}
	return key, nil
}

func create(ctx context.Context, c client.Client, ref types.NamespacedName) (*corev1.Secret, error) {
	key := make([]byte, minLen)
	if _, err := rand.Read(key); err != nil {
		return nil, fmt.Errorf("generating hmac key: %w", err)
	}
	s := newSecret(ref, key)
	err := c.Create(ctx, s)
	if apierrors.IsAlreadyExists(err) {
		// Another replica won the race; use its key so stamps agree.
		s = &corev1.Secret{}
		err = c.Get(ctx, ref, s)
	} else if err == nil {
		// Loud on purpose: on a first install this is expected, but after
		// a key loss every existing stamp is under another key from now on
		// (the hook reports each with a KeyChanged warning; none rolls).
		log.FromContext(ctx).Info("created a new hmac key secret; stamps made under any earlier key are kept until their config changes",
			"secret", ref, "keyID", hasher.KeyID(key))
	}
	return s, err
}

func newSecret(ref types.NamespacedName, key []byte) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: ref.Name, Namespace: ref.Namespace,
			Labels: map[string]string{"app.kubernetes.io/name": "confighash"}},
		Type: corev1.SecretTypeOpaque,
		Data: map[string][]byte{DataKey: key},
	}
}
