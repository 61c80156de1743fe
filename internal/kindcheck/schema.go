package kindcheck

import (
	"encoding/json"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// PathError says that a kind's template path does not lead to a pod template
// in its published schema. It is a configuration error, unlike a failure to
// reach the apiserver.
type PathError struct {
	GVK  schema.GroupVersionKind
	Path []string
	Why  string
}

func (e *PathError) Error() string {
	return fmt.Sprintf("%s %s: template path %s: %s", e.GVK.GroupVersion(), e.GVK.Kind, strings.Join(e.Path, "."), e.Why)
}

// node is the part of an OpenAPI v3 schema the walk needs.
type node struct {
	Ref               string           `json:"$ref"`
	AllOf             []node           `json:"allOf"`
	Properties        map[string]*node `json:"properties"`
	PreserveUnknown   bool             `json:"x-kubernetes-preserve-unknown-fields"`
	GroupVersionKinds []gvkTag         `json:"x-kubernetes-group-version-kind"`
}

type gvkTag struct {
	Group, Version, Kind string
}

type document struct {
	Components struct {
		Schemas map[string]*node `json:"schemas"`
	} `json:"components"`
}

// podFields is what a pod template has, below the template path.
var podFields = []string{"spec", "containers"}

// maxRefs bounds $ref hops, since a hostile or broken document could loop.
const maxRefs = 32

// CheckPath checks, in doc (the apiserver's OpenAPI v3 document for the
// kind's group/version), that path leads from the kind's root to an object
// with spec.containers. A field that keeps unknown fields
// (x-kubernetes-preserve-unknown-fields), the kind's root included, cannot
// be checked below the fields it does not list, and the template path passes
// there: the apiserver accepts anything in them. Below the template path
// only one that lists no fields at all passes. A trimmed CRD (Argo Rollouts
// ships one) is often just {type: object, x-kubernetes-preserve-unknown-fields: true}.
func CheckPath(doc []byte, gvk schema.GroupVersionKind, path []string) error {
	var d document
	if err := json.Unmarshal(doc, &d); err != nil {
		return fmt.Errorf("reading the OpenAPI document of %s: %w", gvk.GroupVersion(), err)
	}
	fail := func(why string, args ...any) error {
		return &PathError{GVK: gvk, Path: path, Why: fmt.Sprintf(why, args...)}
	}
	var root *node
	for _, s := range d.Components.Schemas {
		for _, t := range s.GroupVersionKinds {
			if t.Group == gvk.Group && t.Version == gvk.Version && t.Kind == gvk.Kind {
				root = s
			}
		}
	}
	if root == nil {
		return fail("the apiserver publishes no schema for the kind")
	}
	cur := root
	for i, field := range append(append([]string(nil), path...), podFields...) {
		n, err := resolve(d, cur)
		if err != nil {
			return fail("%v", err)
		}
		next, ok := n.Properties[field]
		if !ok && n.PreserveUnknown && (i < len(path) || n.Properties == nil) {
			// The apiserver keeps whatever is not listed here, so the rest
			// of the path cannot be checked. Listed fields still are: at a
			// CRD's root the apiserver always lists apiVersion, kind and
			// metadata, next to a schema that keeps everything else. Below
			// the template path, a schema that lists the fields of what is
			// there but not spec.containers describes something else.
			return nil
		}
		if !ok {
			if i < len(path) {
				at := "the root"
				if i > 0 {
					at = strings.Join(path[:i], ".")
				}
				return fail("the schema has no field %q under %s", field, at)
			}
			return fail("it is not a pod template: it has no %s", strings.Join(podFields[:i-len(path)+1], "."))
		}
		cur = next
	}
	return nil
}

// resolve follows $ref and a single-element allOf (how OpenAPI v3 wraps a
// reference that carries a description).
func resolve(d document, n *node) (*node, error) {
	for range maxRefs {
		switch {
		case n == nil:
			return &node{}, nil
		case n.Ref != "":
			name := strings.TrimPrefix(n.Ref, "#/components/schemas/")
			next, ok := d.Components.Schemas[name]
			if !ok {
				return nil, fmt.Errorf("unresolved reference %q", n.Ref)
			}
			n = next
		case len(n.AllOf) == 1 && n.Properties == nil:
			n = &n.AllOf[0]
		default:
			return n, nil
		}
	}
	return nil, fmt.Errorf("more than %d references in a row", maxRefs)
}
