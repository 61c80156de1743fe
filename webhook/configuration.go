package webhook

import (
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/confighash/confighash/internal/injection"
	"github.com/confighash/confighash/internal/workload"
)

const (
	// Path is where the handler is served.
	Path = "/mutate"
	// Name is the webhook's name inside the configuration.
	Name = "stamp.confighash.dev"
	// TimeoutSeconds is short on purpose: with failurePolicy Ignore a slow
	// webhook only delays writes, and a stamp the webhook misses is made up
	// by the hook.
	TimeoutSeconds = 5
)

// Configuration builds the MutatingWebhookConfiguration confighash needs.
// Out-of-cluster mode applies it as is; the manifests are tested against it.
// Its namespaceSelector is policy's: the one confighash applies everywhere
// (in namespaced mode the apiserver need not call it elsewhere either).
func Configuration(name string, policy injection.Policy, kinds workload.Registry, cc admissionregistrationv1.WebhookClientConfig) *admissionregistrationv1.MutatingWebhookConfiguration {
	ignore := admissionregistrationv1.Ignore
	none := admissionregistrationv1.SideEffectClassNone
	ifNeeded := admissionregistrationv1.IfNeededReinvocationPolicy
	equivalent := admissionregistrationv1.Equivalent
	timeout := int32(TimeoutSeconds)
	return &admissionregistrationv1.MutatingWebhookConfiguration{
		TypeMeta:   metav1.TypeMeta{APIVersion: "admissionregistration.k8s.io/v1", Kind: "MutatingWebhookConfiguration"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app.kubernetes.io/name": "confighash"}},
		Webhooks: []admissionregistrationv1.MutatingWebhook{{
			Name:         Name,
			ClientConfig: cc,
			Rules:        Rules(kinds),
			// The handler applies the same policy to every request itself:
			// the selector only spares the apiserver calls that would be
			// answered with nothing.
			NamespaceSelector:       policy.NamespaceSelector(),
			FailurePolicy:           &ignore,
			SideEffects:             &none,
			TimeoutSeconds:          &timeout,
			ReinvocationPolicy:      &ifNeeded,
			MatchPolicy:             &equivalent,
			MatchConditions:         MatchConditions(kinds),
			AdmissionReviewVersions: []string{"v1"},
		}},
	}
}

// Rules lists exactly the kinds and operations the handler acts on: UPDATE
// only for kinds whose template can change. A rule for a custom resource the
// apiserver does not serve (yet) is accepted and matches nothing until it does.
func Rules(kinds workload.Registry) []admissionregistrationv1.RuleWithOperations {
	var rules []admissionregistrationv1.RuleWithOperations
	for _, k := range kinds {
		ops := []admissionregistrationv1.OperationType{admissionregistrationv1.Create}
		if k.Mutable {
			ops = append(ops, admissionregistrationv1.Update)
		}
		scope := admissionregistrationv1.NamespacedScope
		rules = append(rules, admissionregistrationv1.RuleWithOperations{
			Operations: ops,
			Rule: admissionregistrationv1.Rule{
				APIGroups:   []string{k.GVK.Group},
				APIVersions: []string{k.GVK.Version},
				Resources:   []string{k.Resource},
				Scope:       &scope,
			},
		})
	}
	return rules
}
