package workload

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/confighash/confighash/hasher"
	"github.com/confighash/confighash/internal/contract"
)

// slimCase is one pod template, with the workload annotations that shape
// what it reads.
type slimCase struct {
	name        string
	spec        corev1.PodSpec
	annotations map[string]string
}

// TestSlimObjectKeepsReadsAndChecksum: for every mutable kind, the cache's
// copy (SlimObject) reads what the whole object reads (ReadsOf: the skip,
// the references, the annotations' errors) and so hashes to the same
// checksum; the webhook, which sees whole objects, and the hook, which
// sees the copies, agree. The templates are hasher's fuzz seeds, this
// package's fixtures, the limits' edges, and seeded random ones.
func TestSlimObjectKeepsReadsAndChecksum(t *testing.T) {
	cases := append(fuzzSeeds(t), fixtureCases()...)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 300 {
		cases = append(cases, randomCase(rng, fmt.Sprintf("random-%d", i)))
	}
	_, kinds := registryWith(t, "group=apps.kruise.io,version=v1alpha1,kind=CloneSet,resource=clonesets,template=spec.pod.template")
	key := []byte("slim-key")
	for _, k := range kinds.Mutable() {
		for _, c := range cases {
			full := objectOf(t, k, c)
			want := ReadsOf(k, full)
			slim := k.SlimObject(full.DeepCopyObject().(client.Object))
			got := ReadsOf(k, slim)
			where := k.Name() + "/" + c.name
			if got.Skip != want.Skip {
				t.Errorf("%s: slim Skip = %q, whole %q", where, got.Skip, want.Skip)
				continue
			}
			if errString(got.RefErr) != errString(want.RefErr) {
				t.Errorf("%s: slim RefErr = %v, whole %v", where, got.RefErr, want.RefErr)
			}
			if want.Skip == SkipOverLimit || want.Skip == SkipNoTemplate {
				continue
			}
			if want.Skip == SkipOptedOut && overLimit(want.Refs, full.GetAnnotations()) {
				continue
			}
			if !reflect.DeepEqual(got.Refs, want.Refs) {
				t.Errorf("%s: slim refs\n%+v\nwhole\n%+v", where, got.Refs, want.Refs)
				continue
			}
			ws, werr := hasher.Checksum(key, "team", want.Refs, fakeLookup)
			gs, gerr := hasher.Checksum(key, "team", got.Refs, fakeLookup)
			if werr != nil || gerr != nil || ws.Checksum != gs.Checksum || !reflect.DeepEqual(ws.Missing, gs.Missing) {
				t.Errorf("%s: slim checksum %+v (%v), whole %+v (%v)", where, gs, gerr, ws, werr)
			}
			if got.Template.Checksum() != want.Template.Checksum() {
				t.Errorf("%s: slim stamp %q, whole %q", where, got.Template.Checksum(), want.Template.Checksum())
			}
		}
	}
}

// FuzzSlimObjectKeepsReads is the property above on arbitrary templates.
func FuzzSlimObjectKeepsReads(f *testing.F) {
	for _, c := range fuzzSeeds(f) {
		spec, _ := json.Marshal(c.spec)
		f.Add(spec, c.annotations[contract.IncludeAnnotation], c.annotations[contract.ExcludeAnnotation])
	}
	k, _ := Kinds().Of(appsv1.SchemeGroupVersion.WithKind("Deployment"))
	f.Fuzz(func(t *testing.T, spec []byte, include, exclude string) {
		c := slimCase{annotations: map[string]string{contract.IncludeAnnotation: include, contract.ExcludeAnnotation: exclude}}
		if json.Unmarshal(spec, &c.spec) != nil {
			return
		}
		full := objectOf(t, k, c)
		want := ReadsOf(k, full)
		got := ReadsOf(k, k.SlimObject(full))
		if got.Skip != want.Skip {
			t.Fatalf("slim Skip = %q, whole %q", got.Skip, want.Skip)
		}
		if want.Skip == NotSkipped && !reflect.DeepEqual(got.Refs, want.Refs) {
			t.Fatalf("slim refs\n%+v\nwhole\n%+v", got.Refs, want.Refs)
		}
	})
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// fakeLookup finds every source but those named missing*, each with
// content of its own.
func fakeLookup(s hasher.Source) (hasher.Content, bool, error) {
	if strings.HasPrefix(s.Name, "missing") {
		return hasher.Content{}, false, nil
	}
	d := hasher.DigestOf([]byte(s.String()))
	return hasher.Content{
		Data:       map[string]hasher.Digest{"level": d, "password": d, "a": d, "k0": d},
		BinaryData: map[string]hasher.Digest{"bin": d},
	}, true, nil
}

// fuzzSeeds reads hasher's FuzzReferences seeds (a pod spec as JSON, an
// include and an exclude annotation); those that are not a pod spec are
// left out.
func fuzzSeeds(t testing.TB) []slimCase {
	t.Helper()
	dir := filepath.Join("..", "..", "hasher", "testdata", "fuzz", "FuzzReferences")
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []slimCase
	for _, e := range entries {
		raw, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(string(raw)), "\n")
		if len(lines) != 4 {
			t.Fatalf("%s: %d lines, want 4", e.Name(), len(lines))
		}
		var vals [3]string
		for i, l := range lines[1:] {
			l = strings.TrimSuffix(strings.TrimPrefix(strings.TrimPrefix(l, "[]byte("), "string("), ")")
			if vals[i], err = strconv.Unquote(l); err != nil {
				t.Fatalf("%s line %d: %v", e.Name(), i+2, err)
			}
		}
		c := slimCase{name: "seed-" + e.Name(), annotations: map[string]string{contract.IncludeAnnotation: vals[1], contract.ExcludeAnnotation: vals[2]}}
		if json.Unmarshal([]byte(vals[0]), &c.spec) != nil {
			continue
		}
		out = append(out, c)
	}
	return out
}

// fixtureCases are ReadsOf's fixtures and the limits' edges.
func fixtureCases() []slimCase {
	optOut := map[string]string{contract.InjectionAnnotation: contract.InjectionDisabled}
	longName := strings.Repeat("n", 250)
	wide := corev1.Container{Name: "c"}
	for i := range 60 {
		wide.Env = append(wide.Env, corev1.EnvVar{Name: "E", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: fmt.Sprintf("%s-%d", longName, i)}, Key: "k"}}})
	}
	return []slimCase{
		{name: "none", spec: specReading(0)},
		{name: "two", spec: specReading(2)},
		{name: "at the sources limit", spec: specReading(MaxSources)},
		{name: "over the sources limit", spec: specReading(MaxSources + 1)},
		{name: "opted out", spec: specReading(2), annotations: optOut},
		{name: "opted out, over", spec: specReading(MaxSources + 1), annotations: optOut},
		{name: "malformed include", spec: specReading(1), annotations: map[string]string{contract.IncludeAnnotation: "configmap/a,nonsense"}},
		{name: "include and exclude", spec: specReading(3), annotations: map[string]string{contract.IncludeAnnotation: "configmap/cm-0,secret/s", contract.ExcludeAnnotation: "configmap/cm-1"}},
		{name: "over the bytes limit", spec: corev1.PodSpec{Containers: []corev1.Container{wide}}},
		{name: "include over the bytes limit", spec: specReading(1), annotations: map[string]string{contract.ExcludeAnnotation: strings.Repeat("configmap/x,", MaxReferenceBytes/12+1)}},
	}
}

// randomCase is a pod template reading from small pools of names and
// keys in every way a pod spec can, so that reads of one source merge.
func randomCase(rng *rand.Rand, name string) slimCase {
	names := []string{"app", "db", "kube-root-ca.crt", "shared", "missing-a", ""}
	keys := []string{"level", "password", "a", "", "x.y"}
	pick := func(s []string) string { return s[rng.IntN(len(s))] }
	opt := func() *bool {
		switch rng.IntN(3) {
		case 0:
			return nil
		case 1:
			return new(true)
		}
		return new(false)
	}
	itemsOf := func() []corev1.KeyToPath {
		var out []corev1.KeyToPath
		for range rng.IntN(3) {
			out = append(out, corev1.KeyToPath{Key: pick(keys), Path: "p"})
		}
		return out
	}
	container := func() corev1.Container {
		c := corev1.Container{Name: "c", Image: "img"}
		for range rng.IntN(4) {
			ref := corev1.LocalObjectReference{Name: pick(names)}
			if rng.IntN(2) == 0 {
				c.Env = append(c.Env, corev1.EnvVar{Name: "E", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{LocalObjectReference: ref, Key: pick(keys), Optional: opt()}}})
			} else {
				c.Env = append(c.Env, corev1.EnvVar{Name: "S", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: ref, Key: pick(keys), Optional: opt()}}})
			}
		}
		c.Env = append(c.Env, corev1.EnvVar{Name: "PLAIN", Value: "v"})
		for range rng.IntN(3) {
			ref := corev1.LocalObjectReference{Name: pick(names)}
			if rng.IntN(2) == 0 {
				c.EnvFrom = append(c.EnvFrom, corev1.EnvFromSource{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: ref, Optional: opt()}})
			} else {
				c.EnvFrom = append(c.EnvFrom, corev1.EnvFromSource{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: ref, Optional: opt()}})
			}
		}
		return c
	}
	var spec corev1.PodSpec
	for range rng.IntN(2) {
		spec.InitContainers = append(spec.InitContainers, container())
	}
	for range 1 + rng.IntN(2) {
		spec.Containers = append(spec.Containers, container())
	}
	for range rng.IntN(4) {
		var v corev1.VolumeSource
		switch rng.IntN(3) {
		case 0:
			v.ConfigMap = &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: pick(names)}, Items: itemsOf(), Optional: opt()}
		case 1:
			v.Secret = &corev1.SecretVolumeSource{SecretName: pick(names), Items: itemsOf(), Optional: opt()}
		default:
			p := &corev1.ProjectedVolumeSource{}
			if rng.IntN(2) == 0 {
				p.Sources = append(p.Sources, corev1.VolumeProjection{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token"}})
			}
			p.Sources = append(p.Sources,
				corev1.VolumeProjection{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: pick(names)}, Items: itemsOf(), Optional: opt()}},
				corev1.VolumeProjection{Secret: &corev1.SecretProjection{LocalObjectReference: corev1.LocalObjectReference{Name: pick(names)}, Items: itemsOf(), Optional: opt()}})
			v.Projected = p
		}
		spec.Volumes = append(spec.Volumes, corev1.Volume{Name: "v", VolumeSource: v})
	}
	a := map[string]string{}
	if rng.IntN(3) == 0 {
		a[contract.IncludeAnnotation] = "configmap/" + pick(names) + ",secret/" + pick(names)
	}
	if rng.IntN(3) == 0 {
		a[contract.ExcludeAnnotation] = "configmap/" + pick(names)
	}
	if rng.IntN(5) == 0 {
		a[contract.InjectionAnnotation] = contract.InjectionDisabled
	}
	return slimCase{name: name, spec: spec, annotations: a}
}

// objectOf is a stored object of kind k with c's template (stamped) and
// annotations, and some bulk the cache has no use for.
func objectOf(t testing.TB, k Kind, c slimCase) client.Object {
	t.Helper()
	tmpl := corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "a"}, Annotations: map[string]string{
			contract.ChecksumAnnotation: "v2:0123456789abcdef:00", "team": "x"}},
		Spec: *c.spec.DeepCopy(),
	}
	meta := metav1.ObjectMeta{Name: "app", Namespace: "team", UID: "uid-1", ResourceVersion: "7", Generation: 3,
		Annotations: map[string]string{"kubectl.kubernetes.io/last-applied-configuration": "{}"}}
	for key, v := range c.annotations {
		meta.Annotations[key] = v
	}
	sel := &metav1.LabelSelector{MatchLabels: map[string]string{"app": "a"}}
	switch k.Name() {
	case "Deployment":
		return &appsv1.Deployment{ObjectMeta: meta, Spec: appsv1.DeploymentSpec{Selector: sel, Template: tmpl}}
	case "StatefulSet":
		return &appsv1.StatefulSet{ObjectMeta: meta, Spec: appsv1.StatefulSetSpec{Selector: sel, Template: tmpl}}
	case "DaemonSet":
		return &appsv1.DaemonSet{ObjectMeta: meta, Spec: appsv1.DaemonSetSpec{Selector: sel, Template: tmpl}}
	case "CronJob":
		cj := &batchv1.CronJob{ObjectMeta: meta}
		cj.Spec.JobTemplate.Spec.Template = tmpl
		return cj
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&tmpl)
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{Object: map[string]any{}}
	u.SetGroupVersionKind(k.GVK)
	if err := unstructured.SetNestedField(u.Object, m, k.TemplatePath...); err != nil {
		t.Fatal(err)
	}
	setMeta(u, meta)
	return u
}
