package hasher

import (
	corev1 "k8s.io/api/core/v1"
)

// readPodSpec records in set every ConfigMap and Secret read that spec makes.
//
// Only reads that feed the workload's configuration count. imagePullSecrets,
// service account tokens, downward API, cluster trust bundles and CSI secret
// refs are deliberately not listed: changes to them are not configuration
// changes the application would need a restart to see. Ephemeral containers
// are skipped because they cannot be part of a pod template.
//
// References with an empty name are skipped: API validation rejects them, so
// the object can never be admitted and there is nothing to roll.
func readPodSpec(set *refSet, spec *corev1.PodSpec) {
	for i := range spec.InitContainers {
		readContainer(set, &spec.InitContainers[i])
	}
	for i := range spec.Containers {
		readContainer(set, &spec.Containers[i])
	}
	for i := range spec.Volumes {
		readVolume(set, &spec.Volumes[i].VolumeSource)
	}
}

func readContainer(set *refSet, c *corev1.Container) {
	for i := range c.Env {
		from := c.Env[i].ValueFrom
		if from == nil {
			continue
		}
		if ref := from.ConfigMapKeyRef; ref != nil && ref.Name != "" {
			set.addKeys(Source{ConfigMap, ref.Name}, envRead(ref.Optional), ref.Key)
		}
		if ref := from.SecretKeyRef; ref != nil && ref.Name != "" {
			set.addKeys(Source{Secret, ref.Name}, volumeRead(ref.Optional), ref.Key)
		}
	}
	for i := range c.EnvFrom {
		from := &c.EnvFrom[i]
		if ref := from.ConfigMapRef; ref != nil && ref.Name != "" {
			set.addWhole(Source{ConfigMap, ref.Name}, envRead(ref.Optional))
		}
		if ref := from.SecretRef; ref != nil && ref.Name != "" {
			set.addWhole(Source{Secret, ref.Name}, volumeRead(ref.Optional))
		}
	}
}

func readVolume(set *refSet, v *corev1.VolumeSource) {
	if cm := v.ConfigMap; cm != nil && cm.Name != "" {
		readItems(set, Source{ConfigMap, cm.Name}, cm.Items, cm.Optional)
	}
	if s := v.Secret; s != nil && s.SecretName != "" {
		readItems(set, Source{Secret, s.SecretName}, s.Items, s.Optional)
	}
	if v.Projected == nil {
		return
	}
	token := hasTokenProjection(v.Projected)
	for i := range v.Projected.Sources {
		p := &v.Projected.Sources[i]
		if cm := p.ConfigMap; cm != nil && cm.Name == rootCAConfigMap && token {
			// Part of the service-account token bundle, not config.
			continue
		}
		if cm := p.ConfigMap; cm != nil && cm.Name != "" {
			readItems(set, Source{ConfigMap, cm.Name}, cm.Items, cm.Optional)
		}
		if s := p.Secret; s != nil && s.Name != "" {
			readItems(set, Source{Secret, s.Name}, s.Items, s.Optional)
		}
	}
}

// rootCAConfigMap is published into every namespace by the control plane
// and projected next to service-account tokens (the kube-api-access-*
// volume the ServiceAccount admission plugin adds to every pod before our
// webhook sees it). It carries the cluster CA for the token, so rotating the
// cluster CA must not roll every workload.
const rootCAConfigMap = "kube-root-ca.crt"

func hasTokenProjection(p *corev1.ProjectedVolumeSource) bool {
	for i := range p.Sources {
		if p.Sources[i].ServiceAccountToken != nil {
			return true
		}
	}
	return false
}

// readItems records a volume-style read: kubelet projects only the listed
// items when there are any, and every key otherwise.
func readItems(set *refSet, src Source, items []corev1.KeyToPath, optional *bool) {
	if len(items) == 0 {
		set.addWhole(src, volumeRead(optional))
		return
	}
	for i := range items {
		set.addKeys(src, volumeRead(optional), items[i].Key)
	}
}

// envRead is a ConfigMap read by env or envFrom: the kubelet builds env
// from its data alone, never its binaryData (EnvOnly).
func envRead(optional *bool) read {
	return read{optional: isOptional(optional), envOnly: true}
}

// volumeRead is any other read: a volume or projection, which writes
// binaryData too, or a Secret, which has no binaryData, so that EnvOnly
// says something only about ConfigMaps.
func volumeRead(optional *bool) read {
	return read{optional: isOptional(optional)}
}

// isOptional follows the API default: a nil optional means required.
func isOptional(optional *bool) bool {
	return optional != nil && *optional
}
