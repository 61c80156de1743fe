package sources

import (
	"encoding/hex"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/confighash/confighash/hasher"
)

// slimmed marks an object Slim has made. client-go may hand an object to the
// transform more than once (its docs ask for idempotent transforms), and
// digesting digests would change every checksum. The key is not a valid
// annotation key, so the apiserver can never deliver an object carrying it.
const slimmed = "!confighash.dev/slimmed"

// Slim replaces a ConfigMap's or Secret's values by their digests and drops
// everything else the checksum does not need. It is idempotent and has the
// shape of a cache.TransformFunc; other objects pass through unchanged.
func Slim(obj any) (any, error) {
	if o, ok := obj.(metav1.Object); ok && o.GetAnnotations()[slimmed] != "" {
		return obj, nil
	}
	switch o := obj.(type) {
	case *corev1.ConfigMap:
		c := hasher.ConfigMapContent(o)
		return &corev1.ConfigMap{
			TypeMeta:   o.TypeMeta,
			ObjectMeta: slimMeta(o.ObjectMeta),
			Data:       hexDigests(c.Data),
			BinaryData: rawDigests(c.BinaryData),
		}, nil
	case *corev1.Secret:
		c := hasher.SecretContent(o)
		return &corev1.Secret{
			TypeMeta:   o.TypeMeta,
			ObjectMeta: slimMeta(o.ObjectMeta),
			Type:       o.Type,
			Data:       rawDigests(c.Data),
		}, nil
	}
	return obj, nil
}

// slimMeta keeps identity and lifecycle only. Labels and annotations go: the
// last-applied-configuration annotation holds a Secret's data in clear.
// The one exception is hasher.IgnoreAnnotation, which decides how the
// source enters a checksum; it is kept as the fixed value, never copied.
func slimMeta(m metav1.ObjectMeta) metav1.ObjectMeta {
	annotations := map[string]string{slimmed: "v1"}
	if hasher.IgnoredBy(m.Annotations) {
		annotations[hasher.IgnoreAnnotation] = hasher.IgnoreTrue
	}
	return metav1.ObjectMeta{
		Name:              m.Name,
		Namespace:         m.Namespace,
		UID:               m.UID,
		ResourceVersion:   m.ResourceVersion,
		Generation:        m.Generation,
		CreationTimestamp: m.CreationTimestamp,
		DeletionTimestamp: m.DeletionTimestamp,
		Annotations:       annotations,
	}
}

func hexDigests(in map[string]hasher.Digest) map[string]string {
	if len(in) == 0 {
		return nil
	}
	out := make(map[string]string, len(in))
	for k, d := range in {
		out[k] = hex.EncodeToString(d[:])
	}
	return out
}

func rawDigests(in map[string]hasher.Digest) map[string][]byte {
	if len(in) == 0 {
		return nil
	}
	out := make(map[string][]byte, len(in))
	for k, d := range in {
		out[k] = d[:]
	}
	return out
}

// Content reads the digests back out of a slimmed object. It fails on an
// object that was not slimmed, rather than hashing values as if they were
// digests.
func Content(obj any) (hasher.Content, error) {
	if o, ok := obj.(metav1.Object); !ok || o.GetAnnotations()[slimmed] == "" {
		return hasher.Content{}, fmt.Errorf("%T was not slimmed", obj)
	}
	switch o := obj.(type) {
	case *corev1.ConfigMap:
		data := make(map[string]hasher.Digest, len(o.Data))
		for k, v := range o.Data {
			b, err := hex.DecodeString(v)
			if err != nil {
				return hasher.Content{}, fmt.Errorf("configmap %s/%s key %q: not a slimmed digest: %w", o.Namespace, o.Name, k, err)
			}
			d, err := toDigest(b)
			if err != nil {
				return hasher.Content{}, fmt.Errorf("configmap %s/%s key %q: %w", o.Namespace, o.Name, k, err)
			}
			data[k] = d
		}
		bin, err := fromRaw(o.BinaryData)
		if err != nil {
			return hasher.Content{}, fmt.Errorf("configmap %s/%s binaryData: %w", o.Namespace, o.Name, err)
		}
		return hasher.Content{Data: data, BinaryData: bin, Ignored: hasher.IgnoredBy(o.Annotations)}, nil
	case *corev1.Secret:
		data, err := fromRaw(o.Data)
		if err != nil {
			return hasher.Content{}, fmt.Errorf("secret %s/%s: %w", o.Namespace, o.Name, err)
		}
		return hasher.Content{Data: data, Ignored: hasher.IgnoredBy(o.Annotations)}, nil
	}
	return hasher.Content{}, fmt.Errorf("unsupported source type %T", obj)
}

func fromRaw(in map[string][]byte) (map[string]hasher.Digest, error) {
	out := make(map[string]hasher.Digest, len(in))
	for k, v := range in {
		d, err := toDigest(v)
		if err != nil {
			return nil, fmt.Errorf("key %q: %w", k, err)
		}
		out[k] = d
	}
	return out, nil
}

func toDigest(b []byte) (hasher.Digest, error) {
	var d hasher.Digest
	if len(b) != len(d) {
		return d, fmt.Errorf("not a slimmed digest: %d bytes", len(b))
	}
	copy(d[:], b)
	return d, nil
}
