package pinning

import (
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/confighash/confighash/hasher"
)

// Errors an object is refused as a snapshot with; read them with errors.Is.
var (
	// ErrNotSnapshot: no snapshot label or source annotation, mutable, a
	// Secret that is not Opaque, or a source of the other kind.
	ErrNotSnapshot = errors.New("not shaped as a confighash snapshot")
	// ErrContentMismatch: its name is not the one its content gives under
	// confighash's key: a look-alike, or content changed under the name.
	ErrContentMismatch = errors.New("its content does not give its name")
)

// VerifyConfigMap checks that cm is a snapshot confighash made, holding the
// content its name says, and returns its source.
func VerifyConfigMap(key []byte, cm *corev1.ConfigMap) (hasher.Source, error) {
	src, err := shapeOf(&cm.ObjectMeta, cm.Immutable, hasher.ConfigMap)
	if err != nil {
		return hasher.Source{}, err
	}
	return src, nameMatches(key, &cm.ObjectMeta, src, hasher.ConfigMapContent(cm))
}

// VerifySecret is VerifyConfigMap for a Secret.
func VerifySecret(key []byte, s *corev1.Secret) (hasher.Source, error) {
	src, err := shapeOf(&s.ObjectMeta, s.Immutable, hasher.Secret)
	if err != nil {
		return hasher.Source{}, err
	}
	if s.Type != corev1.SecretTypeOpaque {
		return hasher.Source{}, fmt.Errorf("secret %s of type %q: %w", s.Name, s.Type, ErrNotSnapshot)
	}
	return src, nameMatches(key, &s.ObjectMeta, src, hasher.SecretContent(s))
}

func shapeOf(meta *metav1.ObjectMeta, immutable *bool, kind hasher.Kind) (hasher.Source, error) {
	if meta.Labels[SnapshotLabel] != "true" {
		return hasher.Source{}, fmt.Errorf("%s: no %s label: %w", meta.Name, SnapshotLabel, ErrNotSnapshot)
	}
	if immutable == nil || !*immutable {
		return hasher.Source{}, fmt.Errorf("%s: not immutable: %w", meta.Name, ErrNotSnapshot)
	}
	src, err := hasher.ParseSource(meta.Annotations[SnapshotOfAnnotation])
	if err != nil {
		return hasher.Source{}, fmt.Errorf("%s: %s: %w (%w)", meta.Name, SnapshotOfAnnotation, ErrNotSnapshot, err)
	}
	if src.Kind != kind {
		return hasher.Source{}, fmt.Errorf("%s: a %s naming %s as its source: %w", meta.Name, kind, src, ErrNotSnapshot)
	}
	return src, nil
}

func nameMatches(key []byte, meta *metav1.ObjectMeta, src hasher.Source, c hasher.Content) error {
	if want := Name(key, meta.Namespace, src, c); meta.Name != want {
		return fmt.Errorf("%s: %w", meta.Name, ErrContentMismatch)
	}
	return nil
}
