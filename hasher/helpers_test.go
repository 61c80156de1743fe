package hasher

import (
	corev1 "k8s.io/api/core/v1"
)

// Builders that keep the test tables readable.

func whole(kind Kind, name string) Reference {
	return Reference{Source: Source{kind, name}, AllKeys: true}
}

func keyed(kind Kind, name string, keys ...string) Reference {
	return Reference{Source: Source{kind, name}, Keys: keys}
}

func optional(r Reference) Reference {
	r.Optional = true
	return r
}

// envOnly marks a ConfigMap read only by env and envFrom.
func envOnly(r Reference) Reference {
	r.EnvOnly = true
	return r
}

func envCM(name, key string, opt *bool) corev1.EnvVar {
	return corev1.EnvVar{Name: "E", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{
		LocalObjectReference: corev1.LocalObjectReference{Name: name}, Key: key, Optional: opt,
	}}}
}

func envSecret(name, key string, opt *bool) corev1.EnvVar {
	return corev1.EnvVar{Name: "E", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
		LocalObjectReference: corev1.LocalObjectReference{Name: name}, Key: key, Optional: opt,
	}}}
}

func envFromCM(name string) corev1.EnvFromSource {
	return corev1.EnvFromSource{ConfigMapRef: &corev1.ConfigMapEnvSource{
		LocalObjectReference: corev1.LocalObjectReference{Name: name},
	}}
}

func envFromSecret(name string, opt *bool) corev1.EnvFromSource {
	return corev1.EnvFromSource{SecretRef: &corev1.SecretEnvSource{
		LocalObjectReference: corev1.LocalObjectReference{Name: name}, Optional: opt,
	}}
}

func volCM(name string, opt *bool, keys ...string) corev1.Volume {
	return corev1.Volume{Name: "v", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
		LocalObjectReference: corev1.LocalObjectReference{Name: name}, Items: items(keys), Optional: opt,
	}}}
}

func volSecret(name string, keys ...string) corev1.Volume {
	return corev1.Volume{Name: "v", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
		SecretName: name, Items: items(keys),
	}}}
}

func projected(sources ...corev1.VolumeProjection) corev1.Volume {
	return corev1.Volume{Name: "p", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
		Sources: sources,
	}}}
}

func projCM(name string, keys ...string) corev1.VolumeProjection {
	return corev1.VolumeProjection{ConfigMap: &corev1.ConfigMapProjection{
		LocalObjectReference: corev1.LocalObjectReference{Name: name}, Items: items(keys),
	}}
}

func projSecret(name string, keys ...string) corev1.VolumeProjection {
	return corev1.VolumeProjection{Secret: &corev1.SecretProjection{
		LocalObjectReference: corev1.LocalObjectReference{Name: name}, Items: items(keys),
	}}
}

func items(keys []string) []corev1.KeyToPath {
	var out []corev1.KeyToPath
	for _, k := range keys {
		out = append(out, corev1.KeyToPath{Key: k, Path: k})
	}
	return out
}

// lookupFrom serves content from a map; sources not in it do not exist.
func lookupFrom(objects map[Source]Content) Lookup {
	return func(src Source) (Content, bool, error) {
		c, ok := objects[src]
		return c, ok, nil
	}
}

// dataOf builds Content whose data holds the given key/value pairs.
func dataOf(kv ...string) Content {
	c := Content{Data: map[string]Digest{}}
	for i := 0; i+1 < len(kv); i += 2 {
		c.Data[kv[i]] = DigestOf([]byte(kv[i+1]))
	}
	return c
}

// binaryDataOf builds Content whose binaryData holds the given key/value pairs.
func binaryDataOf(kv ...string) Content {
	c := Content{BinaryData: map[string]Digest{}}
	for i := 0; i+1 < len(kv); i += 2 {
		c.BinaryData[kv[i]] = DigestOf([]byte(kv[i+1]))
	}
	return c
}
