package workload

import (
	"fmt"
	"reflect"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Registry is the set of kinds one confighash serves: the built-in Kinds and
// the custom ones its configuration adds (--workload-kind). The webhook's
// rules, the hook's watches and the RBAC are all derived from it.
type Registry []Kind

// NewRegistry returns the built-in kinds followed by custom. A custom kind
// that repeats a kind already in the registry is an error, not a silent
// override: two entries for one kind would disagree on its template.
func NewRegistry(custom ...Kind) (Registry, error) {
	r := Registry(Kinds())
	for _, k := range custom {
		if !k.Unstructured() {
			return nil, fmt.Errorf("%s: a configured kind needs a template path", k.GVK)
		}
		if _, ok := r.Of(k.GVK); ok {
			return nil, fmt.Errorf("%s is listed twice (built in, or configured already)", gvkString(k.GVK))
		}
		for _, o := range r {
			if o.GVK.Group == k.GVK.Group && o.Resource == k.Resource {
				return nil, fmt.Errorf("resource %s.%s is listed twice", k.Resource, k.GVK.Group)
			}
		}
		r = append(r, k)
	}
	return r, nil
}

// Configured lists the kinds r adds to the built-in ones: those its
// configuration (--workload-kind) gave NewRegistry.
func (r Registry) Configured() Registry {
	builtin := Kinds()
	var out Registry
	for _, k := range r {
		if _, ok := builtin.Of(k.GVK); !ok {
			out = append(out, k)
		}
	}
	return out
}

// Mutable lists the kinds the hook re-touches.
func (r Registry) Mutable() Registry {
	var out Registry
	for _, k := range r {
		if k.Mutable {
			out = append(out, k)
		}
	}
	return out
}

// Of finds the kind for a group/version/kind.
func (r Registry) Of(gvk schema.GroupVersionKind) (Kind, bool) {
	for _, k := range r {
		if k.GVK == gvk {
			return k, true
		}
	}
	return Kind{}, false
}

// For finds the kind of an object: an unstructured one by the
// GroupVersionKind it carries, a typed one by its Go type, since decoded or
// deep-copied typed objects often have an empty TypeMeta.
func (r Registry) For(obj client.Object) (Kind, bool) {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		return r.Of(u.GroupVersionKind())
	}
	t := reflect.TypeOf(obj)
	for _, k := range r {
		if !k.Unstructured() && reflect.TypeOf(k.New()) == t {
			return k, true
		}
	}
	return Kind{}, false
}

// PodTemplate is Kind.PodTemplate for obj's kind, found with For.
func (r Registry) PodTemplate(obj client.Object) (Template, bool) {
	k, ok := r.For(obj)
	if !ok {
		return Template{}, false
	}
	return k.PodTemplate(obj)
}

func gvkString(gvk schema.GroupVersionKind) string {
	return gvk.Kind + "." + gvk.Version + "." + gvk.Group
}
