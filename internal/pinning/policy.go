package pinning

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/confighash/confighash/hasher"
)

// Skip says why a source is not pinned; the zero value pins it.
type Skip string

// The reasons a source read by a pinned revision is read live instead.
const (
	// Pinned: the source is copied.
	Pinned Skip = ""
	// SkipNever: the source carries PinAnnotation=PinNever.
	SkipNever Skip = "pin-never"
	// SkipIgnored: the source carries contract.IgnoreAnnotation, so the
	// stamp does not name its content and no copy could be checked
	// against it.
	SkipIgnored Skip = "ignored"
	// SkipSecretType: a typed Secret (a token, a certificate, registry or
	// login credentials). Those are rotated to revoke the old value, and
	// an undo must never bring a revoked one back.
	SkipSecretType Skip = "secret-type"
	// SkipMissing: the source does not exist; the pod reads it by name
	// and fails or starts as it would unpinned.
	SkipMissing Skip = "missing"
)

// SourceFacts is what the policy needs of one source; the caller reads it
// from the object (or knows it does not exist).
type SourceFacts struct {
	Source hasher.Source
	Found  bool
	// Annotations are the source's own.
	Annotations map[string]string
	// SecretType is a Secret's type; ignored for a ConfigMap.
	SecretType corev1.SecretType
}

// SkipOf says whether a source is pinned, and if not, why.
func SkipOf(f SourceFacts) Skip {
	switch {
	case !f.Found:
		return SkipMissing
	case f.Annotations[PinAnnotation] == PinNever:
		return SkipNever
	case hasher.IgnoredBy(f.Annotations):
		return SkipIgnored
	case f.Source.Kind == hasher.Secret && !pinnableSecretType(f.SecretType):
		return SkipSecretType
	}
	return Pinned
}

// pinnableSecretType allows only untyped Secrets: every other type is
// either a credential the cluster rotates or issues (tokens, TLS) or one a
// user rotates to revoke (registry, basic and SSH auth).
func pinnableSecretType(t corev1.SecretType) bool {
	return t == "" || t == corev1.SecretTypeOpaque
}

// WorkloadPins reports whether a workload in a pinning namespace pins, from
// its own annotations.
func WorkloadPins(annotations map[string]string) bool {
	return annotations[PinAnnotation] != PinOff
}

// NamespacePins reports whether a namespace's labels turn pinning on. The
// namespace must also be served; that is the namespace policy's to say.
func NamespacePins(labels map[string]string) bool {
	return labels[NamespaceLabel] == NamespaceEnabled
}
