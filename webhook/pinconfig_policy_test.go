package webhook

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/confighash/confighash/hasher"
	"github.com/confighash/confighash/internal/pinning"
)

// TestPinPoliciesNameTheSnapshotsPinningMakes: the policy's name check is
// the infix pinning puts in every snapshot's name, also for a source whose
// name is cut to fit; and each policy has its binding, confighash's
// namespace left out of the pinner's only.
func TestPinPoliciesNameTheSnapshotsPinningMakes(t *testing.T) {
	key := []byte("0123456789abcdef0123456789abcdef")
	for _, name := range []string{"app", strings.Repeat("a", 253)} {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: name}, Data: map[string]string{"k": "v"}}
		snap := pinning.ConfigMapSnapshot(key, cm, hasher.Reference{Source: hasher.Source{Kind: hasher.ConfigMap, Name: name}, AllKeys: true})
		if !strings.Contains(snap.Name, snapshotNameInfix) {
			t.Errorf("snapshot %q lacks %q, which the policy requires", snap.Name, snapshotNameInfix)
		}
	}
	policies, bindings := PinPolicies("tools", "ch")
	if len(policies) != 2 || len(bindings) != 2 {
		t.Fatalf("%d policies, %d bindings, want 2 each", len(policies), len(bindings))
	}
	for i, p := range policies {
		b := bindings[i]
		if b.Name != p.Name || b.Spec.PolicyName != p.Name {
			t.Errorf("binding %s names %s, want %s", b.Name, b.Spec.PolicyName, p.Name)
		}
		if !strings.Contains(p.Spec.MatchConditions[0].Expression, "'system:serviceaccount:tools:ch'") {
			t.Errorf("%s does not match on confighash's ServiceAccount: %s", p.Name, p.Spec.MatchConditions[0].Expression)
		}
	}
	own := bindings[0].Spec.MatchResources.NamespaceSelector.MatchExpressions
	if bindings[0].Name != PinnerPolicyName || len(own) != 1 || own[0].Operator != metav1.LabelSelectorOpNotIn || own[0].Values[0] != "tools" {
		t.Errorf("the pinner's binding selects %v, want every namespace but tools", own)
	}
	if bindings[1].Spec.MatchResources != nil {
		t.Errorf("the label's binding is limited to %v, want every namespace", bindings[1].Spec.MatchResources)
	}
}
