package workload

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/confighash/confighash/internal/contract"
)

func TestParseKind(t *testing.T) {
	const good = "group=apps.kruise.io,version=v1alpha1,kind=CloneSet,resource=clonesets,template=spec.template"
	for name, tc := range map[string]struct {
		in      string
		wantErr string
	}{
		"valid":                 {in: good},
		"spaces after commas":   {in: "group=apps.kruise.io, version=v1alpha1, kind=CloneSet, resource=clonesets, template=spec.template"},
		"deep template":         {in: "group=x.io,version=v1,kind=Job,resource=jobs,template=spec.jobTemplate.spec.template"},
		"missing resource":      {in: "group=apps.kruise.io,version=v1alpha1,kind=CloneSet,template=spec.template", wantErr: "resource is missing"},
		"unknown field":         {in: good + ",scope=Namespaced", wantErr: `unknown field "scope"`},
		"twice":                 {in: good + ",kind=Other", wantErr: "kind given twice"},
		"not name=value":        {in: good + ",oops", wantErr: "not name=value"},
		"lower-case kind":       {in: strings.Replace(good, "CloneSet", "cloneset", 1), wantErr: "CamelCase"},
		"plural upper":          {in: strings.Replace(good, "clonesets", "CloneSets", 1), wantErr: "plural"},
		"template outside spec": {in: strings.Replace(good, "spec.template", "template", 1), wantErr: "must lead into spec"},
		"template is spec":      {in: strings.Replace(good, "spec.template", "spec", 1), wantErr: "must lead into spec"},
		"empty segment":         {in: strings.Replace(good, "spec.template", "spec..template", 1), wantErr: "not a plain field name"},
		"pointer syntax":        {in: strings.Replace(good, "spec.template", "/spec/template", 1), wantErr: "not a plain field name"},
		"bad group":             {in: strings.Replace(good, "apps.kruise.io", "Apps_Kruise", 1), wantErr: "DNS subdomain"},
	} {
		t.Run(name, func(t *testing.T) {
			k, err := ParseKind(tc.in)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("ParseKind error = %v, want one saying %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !k.Unstructured() || !k.Mutable || k.Resource == "" || k.MetaPath != "/"+strings.Join(k.TemplatePath, "/")+"/metadata" {
				t.Errorf("kind = %+v", k)
			}
		})
	}
}

// registryWith is the built-in registry plus the custom kind spec (the
// syntax of ParseKind), and that kind.
func registryWith(t *testing.T, spec string) (Kind, Registry) {
	t.Helper()
	k, err := ParseKind(spec)
	if err != nil {
		t.Fatal(err)
	}
	r, err := NewRegistry(k)
	if err != nil {
		t.Fatal(err)
	}
	return k, r
}

// TestRegistryConfigured: Configured lists the kinds NewRegistry added to
// the built-in ones, and never a built-in one, typed or unstructured.
func TestRegistryConfigured(t *testing.T) {
	if got := Kinds().Configured(); len(got) != 0 {
		t.Errorf("the built-in kinds configure %v", got)
	}
	clone, r := registryWith(t, "group=apps.kruise.io,version=v1alpha1,kind=CloneSet,resource=clonesets,template=spec.template")
	if got := r.Configured(); len(got) != 1 || got[0].GVK != clone.GVK {
		t.Errorf("Configured() = %v, want only %v", got, clone.GVK)
	}
}

func TestNewRegistryRefusesRepeats(t *testing.T) {
	clone, r := registryWith(t, "group=apps.kruise.io,version=v1alpha1,kind=CloneSet,resource=clonesets,template=spec.template")
	if _, ok := r.Of(clone.GVK); !ok || len(r) != len(Kinds())+1 {
		t.Errorf("registry %v lacks the custom kind", r)
	}
	rollout := CustomKind(schema.GroupVersionKind{Group: "argoproj.io", Version: "v1alpha1", Kind: "Rollout"}, "rollouts", []string{"spec", "template"})
	sameResource := CustomKind(schema.GroupVersionKind{Group: "apps.kruise.io", Version: "v1beta1", Kind: "CloneSet"}, "clonesets", []string{"spec", "template"})
	for name, kinds := range map[string][]Kind{
		"a built-in kind":            {rollout},
		"twice":                      {clone, clone},
		"one resource, two versions": {clone, sameResource},
		"no template path":           {{GVK: clone.GVK, Resource: "x"}},
	} {
		if _, err := NewRegistry(kinds...); err == nil {
			t.Errorf("%s: NewRegistry accepted it", name)
		}
	}
}

// TestCustomKindTemplate: a custom kind reads its template at its path,
// writes the stamp through to the object (creating metadata when the
// template has none), and finds no template where there is none to read.
func TestCustomKindTemplate(t *testing.T) {
	k := CustomKind(schema.GroupVersionKind{Group: "e.io", Version: "v1", Kind: "Widget"}, "widgets", []string{"spec", "template"})
	for name, tc := range map[string]struct {
		template any // at spec.template; nil leaves it out
		ok       bool
		hasMeta  bool
	}{
		"with metadata":    {template: map[string]any{"metadata": map[string]any{"labels": map[string]any{"a": "b"}}, "spec": map[string]any{"containers": []any{map[string]any{"name": "c"}}}}, ok: true, hasMeta: true},
		"without metadata": {template: map[string]any{"spec": map[string]any{"containers": []any{}}}, ok: true},
		"absent":           {},
		"not an object":    {template: "text"},
		"wrong types":      {template: map[string]any{"spec": map[string]any{"containers": "c"}}},
	} {
		t.Run(name, func(t *testing.T) {
			u := k.New().(*unstructured.Unstructured)
			u.Object["spec"] = map[string]any{"replicas": int64(1)}
			if tc.template != nil {
				u.Object["spec"].(map[string]any)["template"] = tc.template
			}
			tmpl, ok := k.PodTemplate(u)
			if ok != tc.ok {
				t.Fatalf("PodTemplate ok = %v, want %v", ok, tc.ok)
			}
			if !ok {
				if tmpl.Checksum() != "" {
					t.Error("a missing template has a stamp")
				}
				return
			}
			if tmpl.HasMeta() != tc.hasMeta {
				t.Errorf("HasMeta = %v, want %v", tmpl.HasMeta(), tc.hasMeta)
			}
			tmpl.SetChecksum("v2:k:sum")
			got, _, _ := unstructured.NestedString(u.Object, "spec", "template", "metadata", "annotations", contract.ChecksumAnnotation)
			if got != "v2:k:sum" {
				t.Errorf("stamp in the object = %q after SetChecksum", got)
			}
			if again, _ := k.PodTemplate(u); again.Checksum() != "v2:k:sum" {
				t.Errorf("read back %q", again.Checksum())
			}
			if tc.hasMeta {
				if l, _, _ := unstructured.NestedString(u.Object, "spec", "template", "metadata", "labels", "a"); l != "b" {
					t.Error("SetChecksum lost the template's labels")
				}
			}
			tmpl.SetChecksum("")
			if _, found, _ := unstructured.NestedString(u.Object, "spec", "template", "metadata", "annotations", contract.ChecksumAnnotation); found {
				t.Error("SetChecksum(\"\") left the stamp in the object")
			}
		})
	}
}

func TestCustomKindClearStatusAndName(t *testing.T) {
	k := CustomKind(schema.GroupVersionKind{Group: "e.io", Version: "v1", Kind: "Widget"}, "widgets", []string{"spec", "template"})
	u := k.New().(*unstructured.Unstructured)
	u.Object["status"] = map[string]any{"ready": true}
	other := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "x.io/v1", "kind": "Other", "status": map[string]any{}}}
	k.ClearStatus(u)
	k.ClearStatus(other)
	if _, ok := u.Object["status"]; ok {
		t.Error("ClearStatus left the status")
	}
	if _, ok := other.Object["status"]; !ok {
		t.Error("ClearStatus changed an object of another kind")
	}
	if k.Name() != "Widget.e.io" {
		t.Errorf("Name = %q", k.Name())
	}
	if got := k.NewList().GetObjectKind().GroupVersionKind().Kind; got != "WidgetList" {
		t.Errorf("NewList kind = %q", got)
	}
	if found, ok := (Registry{k}).For(u); !ok || found.Name() != k.Name() {
		t.Error("Registry.For does not find an unstructured object by its kind")
	}
}
