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
	return keyOf(ref, s)
}

// InvalidKeyError says why a Secret does not hold a usable key. It names
// sizes and the data key expected, never key bytes.
type InvalidKeyError struct {
	Secret types.NamespacedName
	// Reason is what is wrong, for people: "no data key ...", "... has 16
	// bytes, want at least 32".
	Reason string
}

func (e *InvalidKeyError) Error() string {
	return fmt.Sprintf("hmac key secret %s: %s", e.Secret, e.Reason)
}

// keyOf returns the key s holds, or an *InvalidKeyError. It is the one
// check of a key: at start-up (Ensure) and on every re-read (Keeper), so a
// running replica never acts on a key its restart would refuse.
func keyOf(ref types.NamespacedName, s *corev1.Secret) ([]byte, error) {
	key, ok := s.Data[DataKey]
	switch {
	case !ok:
		return nil, &InvalidKeyError{Secret: ref, Reason: fmt.Sprintf("no data key %q (%d other data keys)", DataKey, len(s.Data))}
	case len(key) < minLen:
		return nil, &InvalidKeyError{Secret: ref, Reason: fmt.Sprintf("key %q has %d bytes, want at least %d", DataKey, len(key), minLen)}
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
