package webhook

import (
	"fmt"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/confighash/confighash/internal/contract"
	"github.com/confighash/confighash/internal/injection"
	"github.com/confighash/confighash/internal/pinning"
)

const (
	// PinPath is where PinHandler is served.
	PinPath = "/pin"
	// PinName is the pod webhook's name inside the configuration.
	PinName = "pin.confighash.dev"
)

// PinWebhook is the configuration's entry for PinHandler: new pods, in
// namespaces the policy serves that also carry pinning.NamespaceLabel, made
// by a controller from a stamped template. It writes snapshots, so it
// declares NoneOnDryRun (the handler writes nothing on a dry run); it is
// called again when a later webhook changes the pod (a sidecar's volumes),
// so that what the pod reads in the end is checked.
func PinWebhook(policy injection.Policy, cc admissionregistrationv1.WebhookClientConfig) admissionregistrationv1.MutatingWebhook {
	ignore := admissionregistrationv1.Ignore
	sideEffects := admissionregistrationv1.SideEffectClassNoneOnDryRun
	ifNeeded := admissionregistrationv1.IfNeededReinvocationPolicy
	equivalent := admissionregistrationv1.Equivalent
	timeout := int32(TimeoutSeconds)
	scope := admissionregistrationv1.NamespacedScope
	sel := policy.NamespaceSelector()
	sel.MatchExpressions = append(sel.MatchExpressions, metav1.LabelSelectorRequirement{
		Key: pinning.NamespaceLabel, Operator: metav1.LabelSelectorOpIn, Values: []string{pinning.NamespaceEnabled},
	})
	return admissionregistrationv1.MutatingWebhook{
		Name:         PinName,
		ClientConfig: cc,
		Rules: []admissionregistrationv1.RuleWithOperations{{
			Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
			Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"pods"}, Scope: &scope},
		}},
		NamespaceSelector:  sel,
		FailurePolicy:      &ignore,
		SideEffects:        &sideEffects,
		TimeoutSeconds:     &timeout,
		ReinvocationPolicy: &ifNeeded,
		MatchPolicy:        &equivalent,
		MatchConditions: []admissionregistrationv1.MatchCondition{{
			Name: "stamped-and-controller-owned",
			Expression: fmt.Sprintf("has(object.metadata.annotations) && '%s' in object.metadata.annotations && has(object.metadata.ownerReferences) && object.metadata.ownerReferences.exists(r, has(r.controller) && r.controller == true)",
				contract.ChecksumAnnotation),
		}},
		AdmissionReviewVersions: []string{"v1"},
	}
}
