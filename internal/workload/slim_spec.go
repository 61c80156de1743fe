package workload

import (
	"strconv"

	corev1 "k8s.io/api/core/v1"

	"github.com/confighash/confighash/hasher"
)

// readingSpec is the smallest pod spec whose references
// (hasher.References with no annotations) are refs, which must be such a
// list (canonical: merged, sorted). Each reference becomes one read of the
// kind that gives its flags: a ConfigMap read only by env (EnvOnly) an
// envFrom when whole, one env valueFrom per key otherwise; any other read
// one projection of a single projected volume (a projection costs less
// than a volume, and a volume without a token projection has none of the
// root CA's special case). One read per reference gives it its Optional
// as is, and merging it again with the include annotation's reads gives
// what merging the original reads did, since merging is an AND of the
// flags and a union of the keys.
//
// The container and the volume are each shared by the slimmed copies whose
// references to them are equal (sharedValues): the same app reads the same
// names in each namespace it runs in.
func readingSpec(refs []hasher.Reference) corev1.PodSpec {
	var env, projected []hasher.Reference
	for _, r := range refs {
		switch {
		case r.Kind == hasher.ConfigMap && r.EnvOnly:
			env = append(env, r)
		case r.Kind == hasher.ConfigMap || r.Kind == hasher.Secret:
			projected = append(projected, r)
		}
	}
	var spec corev1.PodSpec
	if c := readingContainers.share(refsKey(env), func() *[1]corev1.Container { return envReads(env) }); c != nil {
		spec.Containers = c[:]
	}
	if v := readingVolumes.share(refsKey(projected), func() *[1]corev1.Volume { return projectedReads(projected) }); v != nil {
		spec.Volumes = v[:]
	}
	return spec
}

// The containers and volumes of the slimmed copies' pod specs.
var (
	readingContainers sharedValues[[1]corev1.Container]
	readingVolumes    sharedValues[[1]corev1.Volume]
)

// refsKey spells out refs, every field of each.
func refsKey(refs []hasher.Reference) string {
	parts := make([]string, 0, 6*len(refs))
	for _, r := range refs {
		parts = append(parts, string(r.Kind), r.Name, strconv.FormatBool(r.AllKeys), strconv.FormatBool(r.Optional),
			strconv.FormatBool(r.EnvOnly), strconv.Itoa(len(r.Keys)))
		parts = append(parts, r.Keys...)
	}
	return keyOf(parts...)
}

// envReads is the container that reads refs, ConfigMaps read only by env,
// or nil when it reads nothing.
func envReads(refs []hasher.Reference) *[1]corev1.Container {
	var c corev1.Container
	for _, r := range refs {
		optional := optionalPtr(r.Optional)
		// Copies, as the slimmed copy's other strings (keep).
		name := keep(r.Name)
		if r.AllKeys {
			c.EnvFrom = append(c.EnvFrom, corev1.EnvFromSource{ConfigMapRef: &corev1.ConfigMapEnvSource{
				LocalObjectReference: corev1.LocalObjectReference{Name: name}, Optional: optional}})
			continue
		}
		for _, key := range r.Keys {
			c.Env = append(c.Env, corev1.EnvVar{ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{
				LocalObjectReference: corev1.LocalObjectReference{Name: name}, Key: keep(key), Optional: optional}}})
		}
	}
	if len(c.Env) == 0 && len(c.EnvFrom) == 0 {
		return nil
	}
	return &[1]corev1.Container{c}
}

// projectedReads is the projected volume that reads refs, or nil when
// there are none.
func projectedReads(refs []hasher.Reference) *[1]corev1.Volume {
	if len(refs) == 0 {
		return nil
	}
	projections := make([]corev1.VolumeProjection, 0, len(refs))
	for _, r := range refs {
		optional := optionalPtr(r.Optional)
		ref := corev1.LocalObjectReference{Name: keep(r.Name)}
		if r.Kind == hasher.ConfigMap {
			projections = append(projections, corev1.VolumeProjection{ConfigMap: &corev1.ConfigMapProjection{
				LocalObjectReference: ref, Items: items(r), Optional: optional}})
			continue
		}
		projections = append(projections, corev1.VolumeProjection{Secret: &corev1.SecretProjection{
			LocalObjectReference: ref, Items: items(r), Optional: optional}})
	}
	return &[1]corev1.Volume{{VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: projections}}}}
}

// items lists r's keys as a projection's items: none for a whole read.
func items(r hasher.Reference) []corev1.KeyToPath {
	if r.AllKeys {
		return nil
	}
	out := make([]corev1.KeyToPath, len(r.Keys))
	for i, k := range r.Keys {
		out[i] = corev1.KeyToPath{Key: keep(k)}
	}
	return out
}

// optionalPtr is a read's optional field: nil (required, the API default)
// or true.
func optionalPtr(optional bool) *bool {
	if !optional {
		return nil
	}
	return &optional
}
