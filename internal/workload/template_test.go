package workload

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/confighash/confighash/internal/contract"
)

const testSum = "v1:0123456789abcdef"

// templateOf reads the pod template straight out of each kind's struct
// fields, independently of Kind.PodTemplate, so the two can be compared.
func templateOf(t *testing.T, obj client.Object) (*metav1.ObjectMeta, *corev1.PodSpec) {
	t.Helper()
	switch o := obj.(type) {
	case *appsv1.Deployment:
		return &o.Spec.Template.ObjectMeta, &o.Spec.Template.Spec
	case *appsv1.StatefulSet:
		return &o.Spec.Template.ObjectMeta, &o.Spec.Template.Spec
	case *appsv1.DaemonSet:
		return &o.Spec.Template.ObjectMeta, &o.Spec.Template.Spec
	case *batchv1.Job:
		return &o.Spec.Template.ObjectMeta, &o.Spec.Template.Spec
	case *batchv1.CronJob:
		return &o.Spec.JobTemplate.Spec.Template.ObjectMeta, &o.Spec.JobTemplate.Spec.Template.Spec
	case *corev1.Pod:
		return &o.ObjectMeta, &o.Spec
	}
	t.Fatalf("templateOf: unexpected type %T", obj)
	return nil, nil
}

func TestPodTemplateAliasesObject(t *testing.T) {
	tests := map[string]struct {
		obj client.Object
	}{
		"Deployment":  {obj: &appsv1.Deployment{}},
		"StatefulSet": {obj: &appsv1.StatefulSet{}},
		"DaemonSet":   {obj: &appsv1.DaemonSet{}},
		"Job":         {obj: &batchv1.Job{}},
		"CronJob":     {obj: &batchv1.CronJob{}},
		"Pod":         {obj: &corev1.Pod{}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			tmpl, ok := Kinds().PodTemplate(tc.obj)
			if !ok {
				t.Fatalf("PodTemplate(%T) = false, want true", tc.obj)
			}
			meta, spec := templateOf(t, tc.obj)
			if tmpl.Meta != meta {
				t.Errorf("Template.Meta does not point at the %s's pod template metadata", name)
			}
			if tmpl.Spec != spec {
				t.Errorf("Template.Spec does not point at the %s's pod spec", name)
			}

			tmpl.SetChecksum(testSum)
			if got := meta.Annotations[contract.ChecksumAnnotation]; got != testSum {
				t.Errorf("after SetChecksum the object's template annotation = %q, want %q", got, testSum)
			}
			if got := tmpl.Checksum(); got != testSum {
				t.Errorf("Checksum() = %q, want %q", got, testSum)
			}

			// Writes to the spec go through to the object too.
			tmpl.Spec.ServiceAccountName = "sa"
			if spec.ServiceAccountName != "sa" {
				t.Errorf("write through Template.Spec did not reach the object")
			}

			// For every kind but Pod the stamp must not land on the
			// workload's own metadata.
			if name != "Pod" {
				if _, found := tc.obj.GetAnnotations()[contract.ChecksumAnnotation]; found {
					t.Errorf("stamp leaked onto the %s's own annotations: %v", name, tc.obj.GetAnnotations())
				}
			}
			if name != "CronJob" {
				return
			}
			// A CronJob's Job template metadata is not the pod template.
			cj := tc.obj.(*batchv1.CronJob)
			if _, found := cj.Spec.JobTemplate.Annotations[contract.ChecksumAnnotation]; found {
				t.Errorf("stamp landed on the CronJob's jobTemplate metadata, want jobTemplate.spec.template")
			}
		})
	}
}

// TestPodTemplateUnknownType checks that no kind finds a template in an
// object that is not of its kind: neither the registry, which finds the kind
// by Go type, nor a kind handed another kind's object.
func TestPodTemplateUnknownType(t *testing.T) {
	tests := map[string]struct {
		obj client.Object
	}{
		"ConfigMap":             {obj: &corev1.ConfigMap{}},
		"ReplicaSet":            {obj: &appsv1.ReplicaSet{}},
		"PodTemplate (core/v1)": {obj: &corev1.PodTemplate{}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			tmpl, ok := Kinds().PodTemplate(tc.obj)
			if ok {
				t.Fatalf("PodTemplate(%T) = true, want false", tc.obj)
			}
			if tmpl.Meta != nil || tmpl.Spec != nil {
				t.Errorf("PodTemplate(%T) returned a non-empty Template %+v", tc.obj, tmpl)
			}
			for _, k := range Kinds() {
				if _, ok := k.PodTemplate(tc.obj); ok {
					t.Errorf("%s.PodTemplate(%T) = true, want false", k.Name(), tc.obj)
				}
			}
		})
	}
	for _, k := range Kinds() {
		for _, other := range Kinds() {
			if other.GVK == k.GVK {
				continue
			}
			if _, ok := k.PodTemplate(other.New()); ok {
				t.Errorf("%s.PodTemplate(%T) = true, want false", k.Name(), other.New())
			}
		}
	}
}

func TestSetChecksum(t *testing.T) {
	tests := map[string]struct {
		before map[string]string
		sum    string
		want   map[string]string
	}{
		"set on nil annotations": {
			before: nil,
			sum:    testSum,
			want:   map[string]string{contract.ChecksumAnnotation: testSum},
		},
		"set keeps other annotations": {
			before: map[string]string{"a": "1"},
			sum:    testSum,
			want:   map[string]string{"a": "1", contract.ChecksumAnnotation: testSum},
		},
		"overwrite": {
			before: map[string]string{contract.ChecksumAnnotation: "v1:old", "a": "1"},
			sum:    testSum,
			want:   map[string]string{contract.ChecksumAnnotation: testSum, "a": "1"},
		},
		"empty removes": {
			before: map[string]string{contract.ChecksumAnnotation: "v1:old", "a": "1"},
			sum:    "",
			want:   map[string]string{"a": "1"},
		},
		"empty on nil annotations is a no-op": {
			before: nil,
			sum:    "",
			want:   nil,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			d := &appsv1.Deployment{}
			d.Spec.Template.Annotations = tc.before
			tmpl, _ := Kinds().PodTemplate(d)
			tmpl.SetChecksum(tc.sum)
			got := d.Spec.Template.Annotations
			if len(got) != len(tc.want) || (got == nil) != (tc.want == nil) {
				t.Fatalf("annotations = %v, want %v", got, tc.want)
			}
			for k, v := range tc.want {
				if got[k] != v {
					t.Errorf("annotation %q = %q, want %q", k, got[k], v)
				}
			}
			if got := tmpl.Checksum(); got != tc.sum {
				t.Errorf("Checksum() = %q, want %q", got, tc.sum)
			}
		})
	}
}

func TestOptedOut(t *testing.T) {
	tests := map[string]struct {
		annotations map[string]string
		want        bool
	}{
		"nil":              {annotations: nil, want: false},
		"disabled":         {annotations: map[string]string{contract.InjectionAnnotation: contract.InjectionDisabled}, want: true},
		"enabled":          {annotations: map[string]string{contract.InjectionAnnotation: "enabled"}, want: false},
		"empty value":      {annotations: map[string]string{contract.InjectionAnnotation: ""}, want: false},
		"case matters":     {annotations: map[string]string{contract.InjectionAnnotation: "Disabled"}, want: false},
		"other annotation": {annotations: map[string]string{"confighash.dev/other": contract.InjectionDisabled}, want: false},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := OptedOut(tc.annotations); got != tc.want {
				t.Errorf("OptedOut(%v) = %v, want %v", tc.annotations, got, tc.want)
			}
		})
	}
}

// jsonPointer walks a decoded JSON document along an RFC 6901 pointer.
func jsonPointer(doc any, pointer string) (any, bool) {
	if pointer == "" {
		return doc, true
	}
	if !strings.HasPrefix(pointer, "/") {
		return nil, false
	}
	cur := doc
	for _, tok := range strings.Split(pointer[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch node := cur.(type) {
		case map[string]any:
			next, ok := node[tok]
			if !ok {
				return nil, false
			}
			cur = next
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(node) {
				return nil, false
			}
			cur = node[i]
		default:
			return nil, false
		}
	}
	return cur, true
}

func TestKindsMetaPathMatchesPodTemplate(t *testing.T) {
	for _, k := range Kinds() {
		t.Run(k.GVK.Kind, func(t *testing.T) {
			obj := withTemplate(t, k)
			tmpl, ok := k.PodTemplate(obj)
			if !ok {
				t.Fatalf("PodTemplate(%T) = false for a listed kind", obj)
			}
			tmpl.SetChecksum(testSum)
			raw, err := json.Marshal(obj)
			if err != nil {
				t.Fatal(err)
			}
			var doc any
			if err := json.Unmarshal(raw, &doc); err != nil {
				t.Fatal(err)
			}
			meta, ok := jsonPointer(doc, k.MetaPath)
			if !ok {
				t.Fatalf("MetaPath %q not found in %s", k.MetaPath, raw)
			}
			// RFC 6901 escapes the "/" of the annotation key as "~1".
			key := strings.ReplaceAll(contract.ChecksumAnnotation, "/", "~1")
			got, ok := jsonPointer(meta, "/annotations/"+key)
			if !ok {
				t.Fatalf("no %s under MetaPath %q in %s", contract.ChecksumAnnotation, k.MetaPath, raw)
			}
			if got != testSum {
				t.Errorf("annotation at MetaPath = %v, want %q", got, testSum)
			}
			if strings.Count(string(raw), testSum) != 1 {
				t.Errorf("stamp appears %d times in %s, want once", strings.Count(string(raw), testSum), raw)
			}
		})
	}
}

func TestKinds(t *testing.T) {
	kinds := Kinds()
	wantKinds := []string{"Deployment", "StatefulSet", "DaemonSet", "CronJob", "Rollout", "Job", "Pod"}
	if len(kinds) != len(wantKinds) {
		t.Fatalf("Kinds() has %d entries, want %d", len(kinds), len(wantKinds))
	}
	seenMutableEnd := false
	for i, k := range kinds {
		if k.GVK.Kind != wantKinds[i] {
			t.Errorf("Kinds()[%d] = %s, want %s", i, k.GVK.Kind, wantKinds[i])
		}
		// "mutable ones first", among the typed kinds
		if !k.Mutable {
			seenMutableEnd = true
		} else if seenMutableEnd {
			t.Errorf("mutable kind %s listed after an immutable one", k.GVK.Kind)
		}
		obj := k.New()
		if k.Unstructured() {
			// Custom kinds are unstructured; custom_test.go covers them.
			continue
		}
		gvk, ok := goKindOf(obj)
		if !ok || gvk != k.GVK.Kind {
			t.Errorf("%s: New() returns %T", k.GVK.Kind, obj)
		}
		list := k.NewList()
		if got, want := typeName(list), typeName(obj)+"List"; got != want {
			t.Errorf("%s: NewList() returns %s, want %s", k.GVK.Kind, got, want)
		}
		if want := strings.ToLower(k.GVK.Kind) + "s"; k.Resource != want {
			t.Errorf("%s: Resource = %q, want %q", k.GVK.Kind, k.Resource, want)
		}
		if k.New() == obj {
			t.Errorf("%s: New() returns the same object twice", k.GVK.Kind)
		}
	}
}

// goKindOf names the Kind of a typed object by its Go type.
func goKindOf(obj client.Object) (string, bool) {
	switch obj.(type) {
	case *appsv1.Deployment:
		return "Deployment", true
	case *appsv1.StatefulSet:
		return "StatefulSet", true
	case *appsv1.DaemonSet:
		return "DaemonSet", true
	case *batchv1.Job:
		return "Job", true
	case *batchv1.CronJob:
		return "CronJob", true
	case *corev1.Pod:
		return "Pod", true
	}
	return "", false
}

// typeName is the Go type name of v without pointer and package.
func typeName(v any) string {
	s := fmt.Sprintf("%T", v)
	return s[strings.LastIndex(s, ".")+1:]
}

func TestRegistryMutable(t *testing.T) {
	got := map[string]bool{}
	for _, k := range Kinds().Mutable() {
		if !k.Mutable {
			t.Errorf("Mutable() includes immutable %s", k.GVK.Kind)
		}
		got[k.GVK.Kind] = true
	}
	want := []string{"Deployment", "StatefulSet", "DaemonSet", "CronJob", "Rollout"}
	if len(got) != len(want) {
		t.Errorf("Mutable() = %v, want %v", got, want)
	}
	for _, k := range want {
		if !got[k] {
			t.Errorf("Mutable() lacks %s", k)
		}
	}
	for _, k := range []string{"Job", "Pod"} {
		if got[k] {
			t.Errorf("Mutable() includes %s, whose template is fixed once created", k)
		}
	}
}

func TestRegistryOf(t *testing.T) {
	tests := map[string]struct {
		gvk      schema.GroupVersionKind
		wantKind string
		wantOK   bool
	}{
		"Deployment":            {gvk: schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}, wantKind: "Deployment", wantOK: true},
		"StatefulSet":           {gvk: schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "StatefulSet"}, wantKind: "StatefulSet", wantOK: true},
		"DaemonSet":             {gvk: schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "DaemonSet"}, wantKind: "DaemonSet", wantOK: true},
		"CronJob":               {gvk: schema.GroupVersionKind{Group: "batch", Version: "v1", Kind: "CronJob"}, wantKind: "CronJob", wantOK: true},
		"Job":                   {gvk: schema.GroupVersionKind{Group: "batch", Version: "v1", Kind: "Job"}, wantKind: "Job", wantOK: true},
		"Pod":                   {gvk: schema.GroupVersionKind{Group: "", Version: "v1", Kind: "Pod"}, wantKind: "Pod", wantOK: true},
		"wrong group":           {gvk: schema.GroupVersionKind{Group: "extensions", Version: "v1beta1", Kind: "Deployment"}},
		"wrong version":         {gvk: schema.GroupVersionKind{Group: "batch", Version: "v1beta1", Kind: "CronJob"}},
		"lowercase kind":        {gvk: schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "deployment"}},
		"ReplicaSet":            {gvk: schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "ReplicaSet"}},
		"empty":                 {},
		"Pod in the apps group": {gvk: schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Pod"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			gvk := tc.gvk
			k, ok := Kinds().Of(gvk)
			if ok != tc.wantOK {
				t.Fatalf("Of(%v) ok = %v, want %v", gvk, ok, tc.wantOK)
			}
			if k.GVK.Kind != tc.wantKind {
				t.Errorf("Of(%v) = %s, want %s", gvk, k.GVK.Kind, tc.wantKind)
			}
			if !ok {
				if k.New != nil || k.MetaPath != "" {
					t.Errorf("Of(%v) returned a non-zero Kind on a miss", gvk)
				}
				return
			}
			if k.GVK != gvk {
				t.Errorf("Of(%v).GVK = %v", gvk, k.GVK)
			}
		})
	}
	// Every listed kind is found by its own GVK, with the same entry.
	for _, want := range Kinds() {
		got, ok := Kinds().Of(want.GVK)
		if !ok || got.GVK != want.GVK || got.MetaPath != want.MetaPath || got.Resource != want.Resource || got.Mutable != want.Mutable {
			t.Errorf("Of(%v) = %+v, %v; want the Kinds() entry", want.GVK, got, ok)
		}
	}
}

// withTemplate returns an empty object of kind k that has a pod template:
// typed objects always do, custom ones get an empty one at their path.
func withTemplate(t *testing.T, k Kind) client.Object {
	t.Helper()
	obj := k.New()
	if u, ok := obj.(*unstructured.Unstructured); ok {
		if err := unstructured.SetNestedMap(u.Object, map[string]any{"metadata": map[string]any{}, "spec": map[string]any{}}, k.TemplatePath...); err != nil {
			t.Fatal(err)
		}
	}
	return obj
}

// TestSameGeneration: two copies at one stored generation hold one
// template, for typed kinds and for custom kinds whose template is outside
// metadata and status; generation 0, a bumped generation, and a template
// the generation does not cover tell nothing.
func TestSameGeneration(t *testing.T) {
	deploy, ok := Kinds().Of(appsv1.SchemeGroupVersion.WithKind("Deployment"))
	if !ok {
		t.Fatal("no Deployment kind")
	}
	gvk := schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "App"}
	inSpec := CustomKind(gvk, "apps", []string{"spec", "template"})
	inStatus := CustomKind(gvk, "apps", []string{"status", "template"})
	inMeta := CustomKind(gvk, "apps", []string{"metadata", "template"})
	at := func(g int64) client.Object {
		d := &appsv1.Deployment{}
		d.SetGeneration(g)
		return d
	}
	tests := map[string]struct {
		kind Kind
		a, b int64
		want bool
	}{
		"typed, same generation":            {deploy, 3, 3, true},
		"typed, bumped":                     {deploy, 3, 4, false},
		"typed, not stored":                 {deploy, 0, 0, false},
		"custom, template in spec":          {inSpec, 3, 3, true},
		"custom, template in status":        {inStatus, 3, 3, false},
		"custom, template in metadata":      {inMeta, 3, 3, false},
		"custom, template in spec, bumped":  {inSpec, 3, 4, false},
		"custom, template in spec, no gen.": {inSpec, 0, 0, false},
	}
	for name, tc := range tests {
		if got := tc.kind.SameGeneration(at(tc.a), at(tc.b)); got != tc.want {
			t.Errorf("%s: SameGeneration = %v, want %v", name, got, tc.want)
		}
	}
}
