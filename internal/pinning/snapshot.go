package pinning

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/confighash/confighash/hasher"
)

// ConfigMapSnapshot builds the snapshot of cm that ref reads: the selected
// keys, immutable, named by its content, and nothing of cm's labels or
// annotations (a copied GitOps tracking label would get it pruned). The
// caller adds owner references and the stamp seal.
func ConfigMapSnapshot(key []byte, cm *corev1.ConfigMap, ref hasher.Reference) *corev1.ConfigMap {
	src := hasher.Source{Kind: hasher.ConfigMap, Name: cm.Name}
	snap := &corev1.ConfigMap{
		TypeMeta:  metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		Immutable: new(true),
		Data:      selectKeys(ref, cm.Data),
	}
	if !ref.EnvOnly {
		snap.BinaryData = selectKeys(ref, cm.BinaryData)
	}
	snap.ObjectMeta = snapshotMeta(Name(key, cm.Namespace, src, hasher.ConfigMapContent(snap)), cm.Namespace, src)
	return snap
}

// SecretSnapshot is ConfigMapSnapshot for a Secret the policy pins (see
// SkipOf): the copy is a Secret, never a ConfigMap, and Opaque.
func SecretSnapshot(key []byte, s *corev1.Secret, ref hasher.Reference) *corev1.Secret {
	src := hasher.Source{Kind: hasher.Secret, Name: s.Name}
	snap := &corev1.Secret{
		TypeMeta:  metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		Immutable: new(true),
		Type:      corev1.SecretTypeOpaque,
		Data:      selectKeys(ref, s.Data),
	}
	snap.ObjectMeta = snapshotMeta(Name(key, s.Namespace, src, hasher.SecretContent(snap)), s.Namespace, src)
	return snap
}

func snapshotMeta(name, namespace string, src hasher.Source) metav1.ObjectMeta {
	return metav1.ObjectMeta{
		Name:        name,
		Namespace:   namespace,
		Labels:      map[string]string{SnapshotLabel: "true", managedByLabel: managedBy},
		Annotations: map[string]string{SnapshotOfAnnotation: src.String()},
	}
}
