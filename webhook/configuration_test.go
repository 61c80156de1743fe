package webhook

import (
	"slices"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/api/equality"

	"github.com/confighash/confighash/internal/injection"
	"github.com/confighash/confighash/internal/workload"
)

// withCloneSets is the built-in registry plus OpenKruise's CloneSet, a
// custom kind, and that kind.
func withCloneSets(t *testing.T) (workload.Kind, workload.Registry) {
	t.Helper()
	clones, err := workload.ParseKind("group=apps.kruise.io,version=v1alpha1,kind=CloneSet,resource=clonesets,template=spec.template")
	if err != nil {
		t.Fatal(err)
	}
	kinds, err := workload.NewRegistry(clones)
	if err != nil {
		t.Fatal(err)
	}
	return clones, kinds
}

// TestRulesCoverEveryRegistryKind checks that the admission rules follow the
// registry: one rule per kind, CREATE always, UPDATE exactly for the kinds
// whose template can change. e2e/deploy compares the manifests and the chart
// to Configuration, so they follow the registry through this.
func TestRulesCoverEveryRegistryKind(t *testing.T) {
	_, kinds := withCloneSets(t)
	rules := Rules(kinds)
	if len(rules) != len(kinds) {
		t.Errorf("%d rules for %d kinds", len(rules), len(kinds))
	}
	for _, k := range kinds {
		t.Run(k.GVK.Kind, func(t *testing.T) {
			i := slices.IndexFunc(rules, func(r admissionregistrationv1.RuleWithOperations) bool {
				return slices.Equal(r.APIGroups, []string{k.GVK.Group}) &&
					slices.Equal(r.APIVersions, []string{k.GVK.Version}) &&
					slices.Equal(r.Resources, []string{k.Resource})
			})
			if i < 0 {
				t.Fatalf("no rule for %s/%s %s", k.GVK.Group, k.GVK.Version, k.Resource)
			}
			want := []admissionregistrationv1.OperationType{admissionregistrationv1.Create}
			if k.Mutable {
				want = append(want, admissionregistrationv1.Update)
			}
			if !slices.Equal(rules[i].Operations, want) {
				t.Errorf("operations = %v, want %v", rules[i].Operations, want)
			}
		})
	}
	cfg := Configuration("confighash", injection.New("confighash-system"), kinds, admissionregistrationv1.WebhookClientConfig{})
	if got := cfg.Webhooks[0].Rules; !slices.EqualFunc(got, rules, func(a, b admissionregistrationv1.RuleWithOperations) bool {
		return slices.Equal(a.Operations, b.Operations) && slices.Equal(a.Resources, b.Resources) &&
			slices.Equal(a.APIGroups, b.APIGroups) && slices.Equal(a.APIVersions, b.APIVersions)
	}) {
		t.Errorf("Configuration's rules %v differ from Rules() %v", got, rules)
	}
}

// TestConfigurationSelectorIsThePolicys: the one namespaceSelector is the
// policy's, namespaced mode (--namespaces) included; nothing overwrites it.
func TestConfigurationSelectorIsThePolicys(t *testing.T) {
	for _, p := range []injection.Policy{injection.New("confighash-system"), injection.New("confighash-system", "team-a", "team-b")} {
		cfg := Configuration("confighash", p, workload.Kinds(), admissionregistrationv1.WebhookClientConfig{})
		if got, want := cfg.Webhooks[0].NamespaceSelector, p.NamespaceSelector(); !equality.Semantic.DeepEqual(got, want) {
			t.Errorf("namespaceSelector = %v, want the policy's %v", got, want)
		}
	}
}
