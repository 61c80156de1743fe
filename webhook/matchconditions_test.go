package webhook

import (
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"

	"github.com/confighash/confighash/internal/injection"
	"github.com/confighash/confighash/internal/workload"
)

// TestMatchConditionsFollowTheRegistry: the not-controller-owned condition
// names exactly the immutable kinds of the registry it is given, custom
// kinds included, and Configuration passes its own registry.
func TestMatchConditionsFollowTheRegistry(t *testing.T) {
	clones, kinds := withCloneSets(t)
	// A kind whose template cannot change, which only a registry other
	// than the built-in one holds.
	frozen := clones
	frozen.GVK.Group, frozen.GVK.Kind, frozen.Mutable = "frozen.example.com", "Frozen", false
	withFrozen := append(append(workload.Registry{}, kinds...), frozen)

	owned := func(conds []admissionregistrationv1.MatchCondition) string {
		for _, c := range conds {
			if c.Name == ConditionNotControllerOwned {
				return c.Expression
			}
		}
		t.Fatalf("no %s condition in %v", ConditionNotControllerOwned, conds)
		return ""
	}
	term := func(k workload.Kind) string {
		return "(request.kind.group == '" + k.GVK.Group + "' && request.kind.kind == '" + k.GVK.Kind + "')"
	}
	for name, reg := range map[string]workload.Registry{"with a custom kind": kinds, "with an immutable custom kind": withFrozen} {
		t.Run(name, func(t *testing.T) {
			expr := owned(MatchConditions(reg))
			for _, k := range reg {
				if got := strings.Contains(expr, term(k)); got == k.Mutable {
					t.Errorf("%s (mutable %v) named: %v, in %s", k.GVK.Kind, k.Mutable, got, expr)
				}
			}
			cfg := Configuration("confighash", injection.New("confighash-system"), reg, admissionregistrationv1.WebhookClientConfig{})
			if got := owned(cfg.Webhooks[0].MatchConditions); got != expr {
				t.Errorf("Configuration's condition %q, want MatchConditions' %q", got, expr)
			}
		})
	}
	if strings.Contains(owned(MatchConditions(kinds)), "frozen.example.com") {
		t.Error("a kind outside the registry is named")
	}
}
