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
				if k.GVK.Kind == "Pod" && k.GVK.Group == "" {
					// Not as a workload: the hook lists the pods of the
					// workloads it re-stamped (TestPermissionsListPods).
					want = []string{"list"}
				}
				if !slices.Equal(verbs, want) {
					t.Errorf("%s: verbs %v, want %v", k.GVK.Kind, verbs, want)
				}
			}
		})
	}
}

// TestPermissionsListPods checks the one pod request the hook makes to
// judge a rollout (internal/health): a live LIST, in the served
// namespaces only, naming nothing; no watch, no get.
func TestPermissionsListPods(t *testing.T) {
	for name, namespaces := range map[string][]string{"defaults": nil, "namespaced": {"a", "b"}} {
		t.Run(name, func(t *testing.T) {
			o := DefaultOptions()
			o.Namespaces = namespaces
			var pods []Permission
			for _, p := range Permissions(o, workload.Kinds()) {
				if p.Group == "" && p.Resource == "pods" {
					pods = append(pods, p)
				}
			}
			if len(pods) != 1 {
				t.Fatalf("pod permissions %+v, want one", pods)
			}
			p := pods[0]
			if !slices.Equal(p.Verbs, []string{"list"}) || p.Name != "" || p.OwnNamespace || !slices.Equal(p.Namespaces, namespaces) {
				t.Errorf("pod permission %+v, want list in %v naming nothing", p, namespaces)
			}
		})
	}
}
