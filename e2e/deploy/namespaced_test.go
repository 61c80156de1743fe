package deploy

import (
	"slices"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
)

// namespacedRenders are the namespaced-mode renders, shared by the tests
// like allRenders' (decodedRenders includes them, so every check of the
// manifests holds for namespaced mode too).
var namespacedOnce renderCache

func namespacedRenders(t *testing.T) []Render { return namespacedOnce.get(t, RenderNamespaced) }

// TestNamespacedChartMatchesKustomize: the chart with watchNamespaces and
// an overlay with the namespaced component render the same objects.
func TestNamespacedChartMatchesKustomize(t *testing.T) {
	chartMatchesKustomize(t, namespacedRenders(t), "namespaced")
}

// TestNamespacedRendersServeTheirList: the Deployment's --namespaces is the
// list the render was made for, a Role and RoleBinding stand in each of
// those namespaces, and the ServiceAccount is granted no ConfigMap or
// Secret read by any ClusterRole; the cluster-wide renders pass no
// --namespaces.
func TestNamespacedRendersServeTheirList(t *testing.T) {
	for _, r := range decodedRenders(t) {
		t.Run(r.Name, func(t *testing.T) {
			if got := NamespacesArg(r.Container.Args); !slices.Equal(got, r.Namespaces) {
				t.Fatalf("--namespaces %v, want %v", got, r.Namespaces)
			}
			for _, ns := range r.Namespaces {
				hasRole := slices.ContainsFunc(r.Roles, func(o *rbacv1.Role) bool { return o.Namespace == ns })
				hasBinding := slices.ContainsFunc(r.RoleBinds, func(o *rbacv1.RoleBinding) bool { return o.Namespace == ns })
				if !hasRole || !hasBinding {
					t.Errorf("namespace %s: Role %v, RoleBinding %v; want both", ns, hasRole, hasBinding)
				}
			}
			if len(r.Namespaces) == 0 {
				return
			}
			for _, rule := range grantsOf(t, r).cluster {
				for _, res := range rule.Resources {
					if res == "secrets" || res == "configmaps" {
						t.Errorf("a ClusterRole grants %v on %s in namespaced mode", rule.Verbs, res)
					}
				}
			}
		})
	}
}

// TestChartRefusesUnservableWatchNamespaces: the chart refuses what the
// binary would refuse at start, before anything is installed.
func TestChartRefusesUnservableWatchNamespaces(t *testing.T) {
	_, p := allRenders(t)
	tests := map[string]struct {
		namespaces []any
		wantErr    bool
	}{
		"example list":        {namespaces: []any{"team-a", "team-b"}},
		"kube-system":         {namespaces: []any{"team-a", "kube-system"}, wantErr: true},
		"own namespace":       {namespaces: []any{Namespace}, wantErr: true},
		"not a namespace":     {namespaces: []any{"Team_A"}, wantErr: true},
		"twice":               {namespaces: []any{"team-a", "team-a"}, wantErr: true},
		"empty: cluster-wide": {namespaces: []any{}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := HelmTemplate(p.Chart(), Namespace, map[string]any{"watchNamespaces": tc.namespaces})
			if (err != nil) != tc.wantErr {
				t.Errorf("watchNamespaces=%v: error %v, want error: %v", tc.namespaces, err, tc.wantErr)
			}
		})
	}
}
