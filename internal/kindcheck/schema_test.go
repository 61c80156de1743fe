package kindcheck

import (
	"errors"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// doc is an OpenAPI v3 document as the apiserver publishes one for a CRD
// group/version: the kind's root schema tagged with its GVK, the pod
// template's metadata by reference.
const doc = `{"components":{"schemas":{
 "io.e.v1.Widget":{"type":"object","x-kubernetes-group-version-kind":[{"group":"e.io","version":"v1","kind":"Widget"}],
  "properties":{"metadata":{"allOf":[{"$ref":"#/components/schemas/ObjectMeta"}]},
   "spec":{"type":"object","properties":{
    "replicas":{"type":"integer"},
    "template":{"type":"object","properties":{
      "metadata":{"allOf":[{"$ref":"#/components/schemas/ObjectMeta"}]},
      "spec":{"type":"object","properties":{"containers":{"type":"array"}}}}},
    "loose":{"type":"object","x-kubernetes-preserve-unknown-fields":true},
    "keeps":{"type":"object","properties":{"template":{"type":"object","properties":{
      "spec":{"type":"object","x-kubernetes-preserve-unknown-fields":true,"properties":{"containers":{"type":"array"}}}}}}},
    "loop":{"$ref":"#/components/schemas/Loop"}}}}},
 "io.e.v1.Trimmed":{"type":"object","x-kubernetes-preserve-unknown-fields":true,
  "x-kubernetes-group-version-kind":[{"group":"e.io","version":"v1","kind":"Trimmed"}],
  "properties":{"apiVersion":{"type":"string"},"kind":{"type":"string"},
   "metadata":{"allOf":[{"$ref":"#/components/schemas/ObjectMeta"}]},
   "status":{"type":"object","properties":{"phase":{"type":"string"}}}}},
 "io.e.v1.Bare":{"type":"object","x-kubernetes-preserve-unknown-fields":true,
  "x-kubernetes-group-version-kind":[{"group":"e.io","version":"v1","kind":"Bare"}]},
 "Loop":{"$ref":"#/components/schemas/Loop"},
 "ObjectMeta":{"type":"object","properties":{"annotations":{"type":"object"}}}}}}`

func TestCheckPath(t *testing.T) {
	widget := schema.GroupVersionKind{Group: "e.io", Version: "v1", Kind: "Widget"}
	trimmed := schema.GroupVersionKind{Group: "e.io", Version: "v1", Kind: "Trimmed"}
	for name, tc := range map[string]struct {
		gvk     schema.GroupVersionKind
		path    string
		wantErr string // "" for none
	}{
		"pod template":          {gvk: widget, path: "spec.template"},
		"unchecked below loose": {gvk: widget, path: "spec.loose.anything.template"},
		"no such field":         {gvk: widget, path: "spec.podTemplate", wantErr: `no field "podTemplate" under spec`},
		"not a template":        {gvk: widget, path: "spec.template.spec", wantErr: "not a pod template"},
		"a scalar":              {gvk: widget, path: "spec.replicas", wantErr: "not a pod template"},
		"reference loop":        {gvk: widget, path: "spec.loop.template", wantErr: "references in a row"},
		// A CRD whose root keeps unknown fields: the apiserver lists only
		// apiVersion, kind and metadata (and what the CRD lists) there.
		"root keeps unknown":           {gvk: trimmed, path: "spec.template"},
		"root keeps unknown, bare":     {gvk: schema.GroupVersionKind{Group: "e.io", Version: "v1", Kind: "Bare"}, path: "spec.template"},
		"keeps unknown below the path": {gvk: widget, path: "spec.keeps.template"},
		"a pod spec is not a template": {gvk: widget, path: "spec.keeps.template.spec", wantErr: "not a pod template"},
		"listed field still checked":   {gvk: trimmed, path: "status.template", wantErr: `no field "template" under status`},
		"other kind":                   {gvk: schema.GroupVersionKind{Group: "e.io", Version: "v1", Kind: "Gadget"}, path: "spec.template", wantErr: "no schema for the kind"},
	} {
		t.Run(name, func(t *testing.T) {
			err := CheckPath([]byte(doc), tc.gvk, strings.Split(tc.path, "."))
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("CheckPath = %v", err)
				}
				return
			}
			var pe *PathError
			if !errors.As(err, &pe) || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("CheckPath = %v, want a PathError saying %q", err, tc.wantErr)
			}
			if !strings.Contains(err.Error(), tc.path) {
				t.Errorf("error %q does not name the path %s", err, tc.path)
			}
		})
	}
	if err := CheckPath([]byte("{"), widget, []string{"spec", "template"}); err == nil || errors.As(err, new(*PathError)) {
		t.Errorf("unreadable document: %v, want an error that is not a PathError", err)
	}
}
