package workload

import (
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
func readingSpec(refs []hasher.Reference) corev1.PodSpec {
	var c corev1.Container
	var projections []corev1.VolumeProjection
	for _, r := range refs {
		optional := optionalPtr(r.Optional)
		// Copies, as the slimmed copy's other strings (keep).
		r.Name = keep(r.Name)
		switch {
		case r.Kind == hasher.ConfigMap && r.EnvOnly && r.AllKeys:
			c.EnvFrom = append(c.EnvFrom, corev1.EnvFromSource{ConfigMapRef: &corev1.ConfigMapEnvSource{
				LocalObjectReference: corev1.LocalObjectReference{Name: r.Name}, Optional: optional}})
		case r.Kind == hasher.ConfigMap && r.EnvOnly:
			for _, key := range r.Keys {
				c.Env = append(c.Env, corev1.EnvVar{ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{
					LocalObjectReference: corev1.LocalObjectReference{Name: r.Name}, Key: keep(key), Optional: optional}}})
			}
		case r.Kind == hasher.ConfigMap:
			projections = append(projections, corev1.VolumeProjection{ConfigMap: &corev1.ConfigMapProjection{
				LocalObjectReference: corev1.LocalObjectReference{Name: r.Name}, Items: items(r), Optional: optional}})
		case r.Kind == hasher.Secret:
			projections = append(projections, corev1.VolumeProjection{Secret: &corev1.SecretProjection{
				LocalObjectReference: corev1.LocalObjectReference{Name: r.Name}, Items: items(r), Optional: optional}})
		}
	}
	var spec corev1.PodSpec
	if len(c.Env) > 0 || len(c.EnvFrom) > 0 {
		spec.Containers = []corev1.Container{c}
	}
	if len(projections) > 0 {
		spec.Volumes = []corev1.Volume{{VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: projections}}}}
	}
	return spec
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
