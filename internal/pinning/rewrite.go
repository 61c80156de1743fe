package pinning

import (
	"errors"
	"fmt"
	"strconv"

	corev1 "k8s.io/api/core/v1"

	"github.com/confighash/confighash/hasher"
)

// rootCAConfigMap is the cluster CA projected beside service-account tokens;
// the hasher does not count it as config there (hasher/podspec.go), so it is
// never pinned there either.
const rootCAConfigMap = "kube-root-ca.crt"

// Rewritten is one reference Rewrite changed: its JSON pointer below the
// pod spec (for a patch that touches nothing else) and the snapshot it now
// names.
type Rewritten struct {
	Path, To string
}

// Rewrite points every read of a source in snapshots at its snapshot: env
// valueFrom, envFrom, volumes and projected sources, in containers and init
// containers, exactly the reads hasher.References counts. Keys, items and
// subPaths stay as they are: a snapshot has the keys under their names.
func Rewrite(spec *corev1.PodSpec, snapshots map[hasher.Source]string) []Rewritten {
	var out []Rewritten
	to := func(kind hasher.Kind, name *string, path string) {
		if s, ok := snapshots[hasher.Source{Kind: kind, Name: *name}]; ok && *name != "" {
			*name = s
			out = append(out, Rewritten{Path: path, To: s})
		}
	}
	for i := range spec.InitContainers {
		rewriteContainer(&spec.InitContainers[i], "/initContainers/"+strconv.Itoa(i), to)
	}
	for i := range spec.Containers {
		rewriteContainer(&spec.Containers[i], "/containers/"+strconv.Itoa(i), to)
	}
	for i := range spec.Volumes {
		rewriteVolume(&spec.Volumes[i].VolumeSource, "/volumes/"+strconv.Itoa(i), to)
	}
	return out
}

// Unpin points every read of a snapshot in snapshots back at its source:
// Rewrite undone. A pod the webhook is called for again (another webhook
// changed it after the first call pinned it) and that can no longer be
// pinned must read the live objects everywhere, not in some containers
// only. A snapshot's name that is itself one of the pinned sources is left
// alone: the pod names it on purpose.
func Unpin(spec *corev1.PodSpec, snapshots map[hasher.Source]string) []Rewritten {
	back := make(map[hasher.Source]string, len(snapshots))
	for src, snap := range snapshots {
		s := hasher.Source{Kind: src.Kind, Name: snap}
		if _, pinned := snapshots[s]; !pinned {
			back[s] = src.Name
		}
	}
	return Rewrite(spec, back)
}

type renamer func(kind hasher.Kind, name *string, path string)

func rewriteContainer(c *corev1.Container, at string, to renamer) {
	for i := range c.Env {
		if from := c.Env[i].ValueFrom; from != nil {
			p := at + "/env/" + strconv.Itoa(i) + "/valueFrom"
			if ref := from.ConfigMapKeyRef; ref != nil {
				to(hasher.ConfigMap, &ref.Name, p+"/configMapKeyRef/name")
			}
			if ref := from.SecretKeyRef; ref != nil {
				to(hasher.Secret, &ref.Name, p+"/secretKeyRef/name")
			}
		}
	}
	for i := range c.EnvFrom {
		p := at + "/envFrom/" + strconv.Itoa(i)
		if ref := c.EnvFrom[i].ConfigMapRef; ref != nil {
			to(hasher.ConfigMap, &ref.Name, p+"/configMapRef/name")
		}
		if ref := c.EnvFrom[i].SecretRef; ref != nil {
			to(hasher.Secret, &ref.Name, p+"/secretRef/name")
		}
	}
}

func rewriteVolume(v *corev1.VolumeSource, at string, to renamer) {
	if v.ConfigMap != nil {
		to(hasher.ConfigMap, &v.ConfigMap.Name, at+"/configMap/name")
	}
	if v.Secret != nil {
		to(hasher.Secret, &v.Secret.SecretName, at+"/secret/secretName")
	}
	if v.Projected == nil {
		return
	}
	token := false
	for i := range v.Projected.Sources {
		token = token || v.Projected.Sources[i].ServiceAccountToken != nil
	}
	for i := range v.Projected.Sources {
		p := &v.Projected.Sources[i]
		at := at + "/projected/sources/" + strconv.Itoa(i)
		if p.ConfigMap != nil && (!token || p.ConfigMap.Name != rootCAConfigMap) {
			to(hasher.ConfigMap, &p.ConfigMap.Name, at+"/configMap/name")
		}
		if p.Secret != nil {
			to(hasher.Secret, &p.Secret.Name, at+"/secret/name")
		}
	}
}

// ErrNotCovered says the pod reads more of a source than its snapshot holds
// (a container another webhook injected, say). Pinning it would hide keys,
// so the pod is not pinned.
var ErrNotCovered = errors.New("the pod reads more than the snapshot holds")

// Covers checks that every read of a pinned source in spec is within what
// its snapshot was made from (pinned maps each source to the template's
// merged Reference that its snapshot holds).
func Covers(spec *corev1.PodSpec, pinned map[hasher.Source]hasher.Reference) error {
	refs, err := hasher.References(spec, nil)
	if err != nil {
		return fmt.Errorf("pod references: %w", err)
	}
	for _, r := range refs {
		held, ok := pinned[r.Source]
		if !ok {
			continue
		}
		if !within(r, held) {
			return fmt.Errorf("%s: %w", r.Source, ErrNotCovered)
		}
	}
	return nil
}

// within reports whether read r needs nothing that held leaves out.
func within(r, held hasher.Reference) bool {
	if held.EnvOnly && !r.EnvOnly {
		return false // r reads binaryData, which held dropped
	}
	if held.AllKeys {
		return true
	}
	if r.AllKeys {
		return false
	}
	for _, k := range r.Keys {
		if !reads(held, k) {
			return false
		}
	}
	return true
}
