package deploy

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/confighash/confighash/cmd/confighash/app"
	"github.com/confighash/confighash/webhook"
)

// pinningRenders are the pinning renders, shared by the tests like
// namespacedRenders' (decodedRenders includes them).
func pinningRenders(t *testing.T) []Render { return pinningOnce.get(t, RenderPinning) }

var pinningOnce renderCache

// TestPinningChartMatchesKustomize: the chart with pinning.enabled and
// pinning.namespaces and an overlay with the pinning component render the
// same objects.
func TestPinningChartMatchesKustomize(t *testing.T) {
	chartMatchesKustomize(t, pinningRenders(t), "pinning")
}

// TestPinningRendersArePinning: a render has --pinning exactly when it
// carries the pinner's ClusterRole, bound by a RoleBinding in each of its
// pinning namespaces and by no ClusterRoleBinding, and the admission
// policies, which equal webhook.PinPolicies; the others carry none of it.
func TestPinningRendersArePinning(t *testing.T) {
	for _, r := range decodedRenders(t) {
		t.Run(r.Name, func(t *testing.T) {
			pinning := slices.Contains(r.Container.Args, "--pinning")
			if pinning != (len(r.PinNamespaces) > 0) {
				t.Fatalf("--pinning %v, pinning namespaces %v", pinning, r.PinNamespaces)
			}
			hasRole := slices.ContainsFunc(r.CRoles, func(cr *rbacv1.ClusterRole) bool { return cr.Name == app.PinnerRole })
			if hasRole != pinning {
				t.Errorf("ClusterRole %s rendered: %v, want %v", app.PinnerRole, hasRole, pinning)
			}
			var bound []string
			for _, b := range r.RoleBinds {
				if b.RoleRef.Kind == "ClusterRole" && b.RoleRef.Name == app.PinnerRole {
					bound = append(bound, b.Namespace)
				}
			}
			if !slices.Equal(bound, r.PinNamespaces) {
				t.Errorf("%s bound in %v, want %v", app.PinnerRole, bound, r.PinNamespaces)
			}
			for _, b := range r.CRoleBinds {
				if b.RoleRef.Name == app.PinnerRole {
					t.Errorf("ClusterRoleBinding %s binds %s cluster-wide", b.Name, app.PinnerRole)
				}
			}
			if !pinning {
				if len(r.Policies)+len(r.PolBinds) > 0 {
					t.Errorf("%d admission policies and %d bindings without pinning", len(r.Policies), len(r.PolBinds))
				}
				return
			}
			policies, bindings := webhook.PinPolicies(Namespace, r.SA.Name)
			var gotP, gotB []any
			for _, p := range r.Policies {
				c := p.DeepCopy()
				c.Labels = map[string]string{"app.kubernetes.io/name": c.Labels["app.kubernetes.io/name"]}
				gotP = append(gotP, *c)
			}
			for _, b := range r.PolBinds {
				c := b.DeepCopy()
				c.Labels = map[string]string{"app.kubernetes.io/name": c.Labels["app.kubernetes.io/name"]}
				gotB = append(gotB, *c)
			}
			var wantP, wantB []any
			for _, p := range policies {
				wantP = append(wantP, p)
			}
			for _, b := range bindings {
				wantB = append(wantB, b)
			}
			if diff := cmp.Diff(wantP, gotP); diff != "" {
				t.Errorf("ValidatingAdmissionPolicies differ from webhook.PinPolicies (-code +manifests):\n%s", diff)
			}
			if diff := cmp.Diff(wantB, gotB); diff != "" {
				t.Errorf("ValidatingAdmissionPolicyBindings differ from webhook.PinPolicies (-code +manifests):\n%s", diff)
			}
		})
	}
}

// TestChartRefusesUnservablePinNamespaces: the chart refuses pinning
// namespaces the binary would never pin, before anything is installed.
func TestChartRefusesUnservablePinNamespaces(t *testing.T) {
	_, p := allRenders(t)
	tests := map[string]struct {
		values  map[string]any
		wantErr bool
	}{
		"example list":        {values: map[string]any{"pinning": map[string]any{"enabled": true, "namespaces": []any{"team-a"}}}},
		"own namespace":       {values: map[string]any{"pinning": map[string]any{"enabled": true, "namespaces": []any{Namespace}}}, wantErr: true},
		"kube-system":         {values: map[string]any{"pinning": map[string]any{"enabled": true, "namespaces": []any{"kube-system"}}}, wantErr: true},
		"not served":          {values: map[string]any{"watchNamespaces": []any{"team-a"}, "pinning": map[string]any{"enabled": true, "namespaces": []any{"team-b"}}}, wantErr: true},
		"served":              {values: map[string]any{"watchNamespaces": []any{"team-a"}, "pinning": map[string]any{"enabled": true, "namespaces": []any{"team-a"}}}},
		"unknown pinning key": {values: map[string]any{"pinning": map[string]any{"enabled": true, "namespace": []any{"team-a"}}}, wantErr: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := HelmTemplate(p.Chart(), Namespace, tc.values)
			if (err != nil) != tc.wantErr {
				t.Errorf("%v: error %v, want error: %v", tc.values, err, tc.wantErr)
			}
		})
	}
}
