package workload

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// CustomKind describes a mutable kind served by a CustomResourceDefinition,
// whose pod template is at templatePath.
func CustomKind(gvk schema.GroupVersionKind, resource string, templatePath []string, shortNames ...string) Kind {
	path := append([]string(nil), templatePath...)
	return Kind{
		GVK: gvk, Resource: resource, ShortNames: shortNames,
		MetaPath: "/" + strings.Join(path, "/") + "/metadata",
		Mutable:  true,
		New: func() client.Object {
			u := &unstructured.Unstructured{}
			u.SetGroupVersionKind(gvk)
			return u
		},
		NewList: func() client.ObjectList {
			l := &unstructured.UnstructuredList{}
			l.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
			return l
		},
		ClearStatus: func(obj client.Object) {
			if u, ok := obj.(*unstructured.Unstructured); ok && u.GroupVersionKind() == gvk {
				unstructured.RemoveNestedField(u.Object, "status")
			}
		},
		TemplatePath: path,
	}
}

// KindFlagHelp describes the --workload-kind syntax ParseKind reads.
const KindFlagHelp = "group=G,version=V,kind=K,resource=R,template=PATH: also stamp and re-stamp this custom resource, whose pod template is at the dotted field PATH (e.g. group=apps.kruise.io,version=v1alpha1,kind=CloneSet,resource=clonesets,template=spec.template); repeatable"

var (
	kindPattern  = regexp.MustCompile(`^[A-Z][A-Za-z0-9]*$`)
	fieldPattern = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
)

// ParseKind reads one --workload-kind value (see KindFlagHelp). Every field
// is required: the resource cannot be guessed from the kind (admission
// rules and RBAC name resources), and a template path that a typo made
// wrong would otherwise be a silent no-op.
func ParseKind(s string) (Kind, error) {
	fields := map[string]string{}
	for _, part := range strings.Split(s, ",") {
		name, value, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			return Kind{}, fmt.Errorf("workload kind %q: %q is not name=value", s, part)
		}
		switch name {
		case "group", "version", "kind", "resource", "template":
		default:
			return Kind{}, fmt.Errorf("workload kind %q: unknown field %q (want group, version, kind, resource, template)", s, name)
		}
		if _, dup := fields[name]; dup {
			return Kind{}, fmt.Errorf("workload kind %q: %s given twice", s, name)
		}
		fields[name] = value
	}
	var errs []error
	for _, name := range []string{"group", "version", "kind", "resource", "template"} {
		if fields[name] == "" {
			errs = append(errs, fmt.Errorf("%s is missing", name))
		}
	}
	if g := fields["group"]; g != "" && len(validation.IsDNS1123Subdomain(g)) > 0 {
		errs = append(errs, fmt.Errorf("group %q is not a DNS subdomain", g))
	}
	if v := fields["version"]; v != "" && len(validation.IsDNS1035Label(v)) > 0 {
		errs = append(errs, fmt.Errorf("version %q is not a DNS label", v))
	}
	if k := fields["kind"]; k != "" && !kindPattern.MatchString(k) {
		errs = append(errs, fmt.Errorf("kind %q must be CamelCase, as in the CRD's spec.names.kind", k))
	}
	if r := fields["resource"]; r != "" && len(validation.IsDNS1035Label(r)) > 0 {
		errs = append(errs, fmt.Errorf("resource %q must be the CRD's plural, lower case", r))
	}
	path, err := parseTemplatePath(fields["template"])
	if fields["template"] != "" && err != nil {
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return Kind{}, fmt.Errorf("workload kind %q: %w", s, err)
	}
	gvk := schema.GroupVersionKind{Group: fields["group"], Version: fields["version"], Kind: fields["kind"]}
	return CustomKind(gvk, fields["resource"], path), nil
}

// parseTemplatePath splits a dotted field path. The pod template must sit
// under the object's spec: metadata belongs to the object itself, and status
// is written by its controller, not by users.
func parseTemplatePath(s string) ([]string, error) {
	path := strings.Split(s, ".")
	for _, f := range path {
		if !fieldPattern.MatchString(f) {
			return nil, fmt.Errorf("template path %q: field %q is not a plain field name", s, f)
		}
	}
	if path[0] != "spec" || len(path) < 2 {
		return nil, fmt.Errorf("template path %q must lead into spec (spec.template, say)", s)
	}
	return path, nil
}

// Name is how the hook's requests, metrics and events name the kind: the
// kind alone for the typed ones, qualified by its group for unstructured
// ones (the Rollout, and those --workload-kind adds), which may share a kind
// name with a typed one or with each other.
func (k Kind) Name() string {
	if !k.Unstructured() {
		return k.GVK.Kind
	}
	return k.GVK.Kind + "." + k.GVK.Group
}
