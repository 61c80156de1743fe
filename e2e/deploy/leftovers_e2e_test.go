//go:build e2e

package deploy

import (
	"context"
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
)

// trace is an object confighash made or marked, and what gave it away.
type trace struct {
	// Key is "kind/name" in kubectl's spelling (lower-case kind).
	Key       string
	Namespace string
	Why       string
}

func (t trace) String() string {
	return fmt.Sprintf("%s in %q (%s)", t.Key, t.Namespace, t.Why)
}

// sweep lists every object of every resource type the apiserver serves
// (discovery, preferred versions) and returns those that bear a trace of
// confighash: in its namespace, named after it, labelled or annotated with
// its names, written by its field manager, or an Event it reported.
// Objects spare says are not confighash's are left out.
func sweep(ctx context.Context, cfg *rest.Config, spare func(*unstructured.Unstructured) bool) ([]trace, error) {
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("discovery client: %w", err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("dynamic client: %w", err)
	}
	lists, err := dc.ServerPreferredResources()
	if err != nil {
		return nil, fmt.Errorf("discovering resource types: %w", err)
	}
	seen := map[string]bool{}
	var found []trace
	for _, l := range lists {
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil {
			return nil, fmt.Errorf("group version %q: %w", l.GroupVersion, err)
		}
		for _, r := range l.APIResources {
			if strings.Contains(r.Name, "/") || !slices.Contains(r.Verbs, "list") {
				continue
			}
			items, err := listAll(ctx, dyn.Resource(gv.WithResource(r.Name)))
			if err != nil {
				return nil, err
			}
			for i := range items {
				u := &items[i]
				if seen[string(u.GetUID())] {
					continue // events, in two groups
				}
				seen[string(u.GetUID())] = true
				if spare(u) {
					continue
				}
				if why := traceOf(u); why != "" {
					found = append(found, trace{Key: strings.ToLower(u.GetKind()) + "/" + u.GetName(), Namespace: u.GetNamespace(), Why: why})
				}
			}
		}
	}
	return found, nil
}

func listAll(ctx context.Context, ri dynamic.NamespaceableResourceInterface) ([]unstructured.Unstructured, error) {
	var out []unstructured.Unstructured
	opts := metav1.ListOptions{Limit: 500}
	for {
		l, err := ri.List(ctx, opts)
		if err != nil {
			return nil, fmt.Errorf("listing: %w", err)
		}
		out = append(out, l.Items...)
		if opts.Continue = l.GetContinue(); opts.Continue == "" {
			return out, nil
		}
	}
}

// traceOf says what marks u as confighash's, or "".
func traceOf(u *unstructured.Unstructured) string {
	const name = "confighash"
	switch {
	case u.GetNamespace() == Namespace:
		return "in confighash's namespace"
	case strings.Contains(u.GetName(), name):
		return "named after confighash"
	}
	for k, v := range u.GetLabels() {
		if strings.Contains(k, name) || strings.Contains(v, name) {
			return "label " + k + "=" + v
		}
	}
	for k := range u.GetAnnotations() {
		if strings.Contains(k, name) {
			return "annotation " + k
		}
	}
	for _, m := range u.GetManagedFields() {
		if strings.HasPrefix(m.Manager, name) {
			return "written by field manager " + m.Manager
		}
	}
	for _, path := range [][]string{{"reportingComponent"}, {"reportingController"}, {"source", "component"}} {
		if v, _, _ := unstructured.NestedString(u.Object, path...); strings.Contains(v, name) {
			return "reported by " + v
		}
	}
	return ""
}
