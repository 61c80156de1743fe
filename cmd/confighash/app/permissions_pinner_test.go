package app

import (
	"slices"
	"strings"
	"testing"

	"github.com/confighash/confighash/internal/workload"
)

// TestPermissionsPinnerIsPerNamespace: with --pinning, the pinner's
// requests (the revisions it reads and lists, the workloads whose opt-out
// it reads; create, patch and delete of ConfigMaps and Secrets) are exactly
// the rows granted through PinnerRole, which namespaces bind; without
// --pinning no row names the role.
func TestPermissionsPinnerIsPerNamespace(t *testing.T) {
	for _, pinning := range []bool{false, true} {
		o := DefaultOptions()
		o.Pinning = pinning
		got := map[string][]string{}
		for _, p := range Permissions(o, workload.Kinds()) {
			if (p.Role == PinnerRole) != strings.HasPrefix(p.Why, "pinner:") || (p.Role != "" && p.Role != PinnerRole) {
				t.Errorf("pinning=%v: %+v: role %q", pinning, p, p.Role)
			}
			if p.Role == PinnerRole {
				if p.OwnNamespace || len(p.Namespaces) > 0 {
					t.Errorf("pinning=%v: %+v confined: the bindings say where it applies", pinning, p)
				}
				got[p.Resource] = append(got[p.Resource], p.Verbs...)
			}
		}
		want := map[string][]string{}
		if pinning {
			want = map[string][]string{"configmaps": {"create", "delete", "patch"}, "secrets": {"create", "delete", "patch"},
				"replicasets": {"get", "list"}, "controllerrevisions": {"get", "list"}, "jobs": {"get"},
				"statefulsets": {"get"}, "daemonsets": {"get"}, "cronjobs": {"get"}}
		}
		for res, verbs := range got {
			slices.Sort(verbs)
			if !slices.Equal(verbs, want[res]) {
				t.Errorf("pinning=%v: the pinner role holds %v on %s, want %v", pinning, verbs, res, want[res])
			}
		}
		if len(got) != len(want) {
			t.Errorf("pinning=%v: the pinner role covers %v, want %v", pinning, got, want)
		}
	}
}
