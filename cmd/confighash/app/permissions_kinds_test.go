package app

import (
	"slices"
	"testing"

	"github.com/confighash/confighash/internal/workload"
)

// TestPermissionsCoverEveryRegistryKind checks that the RBAC table follows
// the registry: the hook lists, watches and patches every kind it
// re-stamps, and asks nothing of the kinds it only stamps at admission
// (least privilege). e2e/deploy checks the shipped RBAC against this table
// both ways, so the manifests and the chart follow the registry through it.
func TestPermissionsCoverEveryRegistryKind(t *testing.T) {
	tests := map[string]Options{
		"defaults":   DefaultOptions(),
		"namespaced": func() Options { o := DefaultOptions(); o.Namespaces = []string{"a", "b"}; return o }(),
	}
	for name, o := range tests {
		t.Run(name, func(t *testing.T) {
			ps := Permissions(o, workload.Kinds())
			for _, k := range workload.Kinds() {
				var verbs []string
				for _, p := range ps {
					if p.Group == k.GVK.Group && p.Resource == k.Resource {
						verbs = append(verbs, p.Verbs...)
						if !slices.Equal(p.Namespaces, o.Namespaces) {
							t.Errorf("%s: %v confined to %v, want %v", k.GVK.Kind, p.Verbs, p.Namespaces, o.Namespaces)
						}
					}
				}
				slices.Sort(verbs)
				var want []string
				if k.Mutable {
					want = []string{"list", "patch", "watch"}
				}
				if !slices.Equal(verbs, want) {
					t.Errorf("%s: verbs %v, want %v", k.GVK.Kind, verbs, want)
				}
			}
		})
	}
}
