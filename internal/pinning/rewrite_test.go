package pinning

import (
	"encoding/json"
	"errors"
	"math/rand/v2"
	"reflect"
	"testing"

	jsonpatch "github.com/evanphx/json-patch/v5"
	corev1 "k8s.io/api/core/v1"

	"github.com/confighash/confighash/hasher"
)

// randomSpec reads a few sources in every way the hasher counts, and some
// it does not (imagePullSecrets, the token bundle's CA).
func randomSpec(r *rand.Rand) *corev1.PodSpec {
	names := []string{"a", "b", "c", "kube-root-ca.crt"}
	name := func() string { return names[r.IntN(len(names))] }
	container := func() corev1.Container {
		var c corev1.Container
		for range r.IntN(4) {
			if r.IntN(2) == 0 {
				c.Env = append(c.Env, corev1.EnvVar{Name: "E", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: name()}, Key: name()}}})
			} else {
				c.Env = append(c.Env, corev1.EnvVar{Name: "E", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: name()}, Key: name()}}})
			}
		}
		c.Env = append(c.Env, corev1.EnvVar{Name: "PLAIN", Value: "x"})
		if r.IntN(2) == 0 {
			c.EnvFrom = append(c.EnvFrom, corev1.EnvFromSource{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: name()}}})
		}
		if r.IntN(2) == 0 {
			c.EnvFrom = append(c.EnvFrom, corev1.EnvFromSource{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: name()}}})
		}
		return c
	}
	items := func() []corev1.KeyToPath {
		if r.IntN(2) == 0 {
			return nil
		}
		return []corev1.KeyToPath{{Key: name(), Path: "p"}}
	}
	spec := &corev1.PodSpec{ImagePullSecrets: []corev1.LocalObjectReference{{Name: "a"}}}
	for range 1 + r.IntN(2) {
		spec.Containers = append(spec.Containers, container())
	}
	for range r.IntN(2) {
		spec.InitContainers = append(spec.InitContainers, container())
	}
	for range r.IntN(4) {
		var v corev1.VolumeSource
		switch r.IntN(3) {
		case 0:
			v.ConfigMap = &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: name()}, Items: items()}
		case 1:
			v.Secret = &corev1.SecretVolumeSource{SecretName: name(), Items: items()}
		default:
			p := &corev1.ProjectedVolumeSource{}
			if r.IntN(2) == 0 {
				p.Sources = append(p.Sources, corev1.VolumeProjection{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token"}})
			}
			p.Sources = append(p.Sources,
				corev1.VolumeProjection{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: name()}, Items: items()}},
				corev1.VolumeProjection{Secret: &corev1.SecretProjection{LocalObjectReference: corev1.LocalObjectReference{Name: name()}, Items: items()}})
			v.Projected = p
		}
		spec.Volumes = append(spec.Volumes, corev1.Volume{Name: "v", VolumeSource: v})
	}
	return spec
}

// TestRewriteMovesExactlyTheReadsTheHasherCounts: after pointing every
// source at a new name, the hasher sees the same reads of the new names,
// and nothing it does not count was touched.
func TestRewriteMovesExactlyTheReadsTheHasherCounts(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 2000 {
		spec := randomSpec(r)
		before, err := hasher.References(spec, nil)
		if err != nil {
			t.Fatal(err)
		}
		to := map[hasher.Source]string{}
		var want []hasher.Reference
		for _, ref := range before {
			to[ref.Source] = ref.Name + "-pin-x"
			moved := ref
			moved.Name = to[ref.Source]
			want = append(want, moved)
		}
		got := spec.DeepCopy()
		changed := Rewrite(got, to)
		after, err := hasher.References(got, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(after, want) {
			t.Fatalf("spec %d: after rewrite the hasher sees\n%+v\nwant\n%+v\nspec %+v", i, after, want, spec)
		}
		if len(before) > 0 && len(changed) == 0 {
			t.Fatalf("spec %d: nothing rewritten", i)
		}
		// Each path names the field that changed: a patch of exactly these
		// replaces gives the rewritten spec.
		if patched := applyPaths(t, spec, changed); !reflect.DeepEqual(patched, got) {
			t.Fatalf("spec %d: the paths do not give the rewrite: %+v", i, changed)
		}
		if got.ImagePullSecrets[0].Name != "a" {
			t.Fatalf("spec %d: imagePullSecrets rewritten", i)
		}
		// Unpin undoes it, by the same kind of paths.
		back := got.DeepCopy()
		undone := Unpin(back, to)
		if !reflect.DeepEqual(back, spec) || len(undone) != len(changed) {
			t.Fatalf("spec %d: unpinning gave\n%+v\nwant\n%+v", i, back, spec)
		}
		// Rewriting with nothing to pin changes nothing.
		same := spec.DeepCopy()
		if len(Rewrite(same, nil)) != 0 || !reflect.DeepEqual(same, spec) {
			t.Fatalf("spec %d: an empty rewrite changed the spec", i)
		}
	}
}

func TestRewriteLeavesTheTokenBundlesCA(t *testing.T) {
	spec := &corev1.PodSpec{Volumes: []corev1.Volume{{Name: "kube-api-access", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
		{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token"}},
		{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: rootCAConfigMap}}},
	}}}}}}
	pins := map[hasher.Source]string{{Kind: hasher.ConfigMap, Name: rootCAConfigMap}: "x"}
	if r := Rewrite(spec, pins); len(r) != 0 || spec.Volumes[0].Projected.Sources[1].ConfigMap.Name != rootCAConfigMap {
		t.Errorf("rewrote the token bundle's CA (%v)", r)
	}
}

func TestCovers(t *testing.T) {
	src := hasher.Source{Kind: hasher.ConfigMap, Name: "app"}
	env := func(key string) corev1.Container {
		return corev1.Container{Env: []corev1.EnvVar{{Name: "E", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "app"}, Key: key}}}}}
	}
	volume := corev1.Volume{Name: "v", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "app"}}}}
	cases := []struct {
		name string
		spec corev1.PodSpec
		held hasher.Reference
		ok   bool
	}{
		{"the same key", corev1.PodSpec{Containers: []corev1.Container{env("a")}}, hasher.Reference{Source: src, Keys: []string{"a"}, EnvOnly: true}, true},
		{"a key of a whole copy", corev1.PodSpec{Containers: []corev1.Container{env("z")}}, hasher.Reference{Source: src, AllKeys: true}, true},
		{"an injected container's other key", corev1.PodSpec{Containers: []corev1.Container{env("a"), env("b")}}, hasher.Reference{Source: src, Keys: []string{"a"}, EnvOnly: true}, false},
		{"a volume of an env-only copy", corev1.PodSpec{Containers: []corev1.Container{env("a")}, Volumes: []corev1.Volume{volume}}, hasher.Reference{Source: src, AllKeys: true, EnvOnly: true}, false},
		{"a whole read of a key copy", corev1.PodSpec{Volumes: []corev1.Volume{volume}}, hasher.Reference{Source: src, Keys: []string{"a"}}, false},
		{"an unpinned source", corev1.PodSpec{Containers: []corev1.Container{env("a")}}, hasher.Reference{Source: hasher.Source{Kind: hasher.Secret, Name: "app"}, Keys: []string{"b"}}, true},
	}
	for _, c := range cases {
		err := Covers(&c.spec, map[hasher.Source]hasher.Reference{c.held.Source: c.held})
		if (err == nil) != c.ok || (err != nil && !errors.Is(err, ErrNotCovered)) {
			t.Errorf("%s: Covers = %v, want ok=%v", c.name, err, c.ok)
		}
	}
}

// applyPaths applies one JSON patch replace per change to spec's JSON.
func applyPaths(t *testing.T, spec *corev1.PodSpec, changed []Rewritten) *corev1.PodSpec {
	t.Helper()
	ops := make([]map[string]string, len(changed))
	for i, c := range changed {
		ops[i] = map[string]string{"op": "replace", "path": c.Path, "value": c.To}
	}
	raw, err := json.Marshal(spec)
	if err != nil {
		t.Fatal(err)
	}
	body, err := json.Marshal(ops)
	if err != nil {
		t.Fatal(err)
	}
	p, err := jsonpatch.DecodePatch(body)
	if err != nil {
		t.Fatal(err)
	}
	if raw, err = p.Apply(raw); err != nil {
		t.Fatal(err)
	}
	out := &corev1.PodSpec{}
	if err := json.Unmarshal(raw, out); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestUnpinLeavesASourceNamedLikeASnapshot: a pod that reads, as a source of
// its own, an object under a snapshot's name keeps reading it.
func TestUnpinLeavesASourceNamedLikeASnapshot(t *testing.T) {
	a, b := hasher.Source{Kind: hasher.ConfigMap, Name: "a"}, hasher.Source{Kind: hasher.ConfigMap, Name: "b"}
	spec := &corev1.PodSpec{Containers: []corev1.Container{{Name: "c", EnvFrom: []corev1.EnvFromSource{
		{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "a"}}},
		{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "a-pin-1"}}},
	}}}}
	// b's snapshot has the name of source a, which the pod reads.
	changed := Unpin(spec, map[hasher.Source]string{a: "a-pin-1", b: "a"})
	from := spec.Containers[0].EnvFrom
	if len(changed) != 1 || from[0].ConfigMapRef.Name != "a" || from[1].ConfigMapRef.Name != "a" {
		t.Errorf("unpinned to %q and %q (%v); want a left alone and a-pin-1 back to a", from[0].ConfigMapRef.Name, from[1].ConfigMapRef.Name, changed)
	}
}
