package webhook

import (
	"fmt"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"

	"github.com/confighash/confighash/internal/contract"
	"github.com/confighash/confighash/internal/workload"
)

// Names of the webhook's matchConditions.
const (
	// ConditionNotOptedOut skips workloads carrying the opt-out annotation.
	ConditionNotOptedOut = "not-opted-out"
	// ConditionNotControllerOwned skips Pods and Jobs a controller creates.
	ConditionNotControllerOwned = "not-controller-owned"
)

// MatchConditions let the apiserver skip the calls the handler would answer
// with nothing: every Pod of a ReplicaSet, every Job of a CronJob, and any
// workload opted out by annotation. A 1,000-replica rollout was 1,000 calls
// that each ended in "owned by a controller". The handler keeps its own
// checks: these conditions bind only the apiserver, and a condition that
// fails to evaluate means, under failurePolicy Ignore, no call at all.
//
// object is null on DELETE (no rule names DELETE, but a rule may gain it),
// and metadata fields are absent rather than empty, hence the has() guards.
// kinds are the kinds served, the registry Configuration is given.
func MatchConditions(kinds workload.Registry) []admissionregistrationv1.MatchCondition {
	return []admissionregistrationv1.MatchCondition{
		{
			Name: ConditionNotOptedOut,
			Expression: fmt.Sprintf("object == null || !has(object.metadata.annotations) || !('%[1]s' in object.metadata.annotations) || object.metadata.annotations['%[1]s'] != '%[2]s'",
				contract.InjectionAnnotation, contract.InjectionDisabled),
		},
		{
			Name: ConditionNotControllerOwned,
			Expression: fmt.Sprintf("object == null || !(%s) || !has(object.metadata.ownerReferences) || !object.metadata.ownerReferences.exists(r, has(r.controller) && r.controller == true)",
				immutableKinds(kinds)),
		},
	}
}

// immutableKinds is a CEL test of request.kind for the kinds whose objects a
// controller creates from a template that was stamped already (the handler
// skips exactly those when controller-owned). Mutable kinds are stamped
// whoever owns them: an operator's Deployment still reads config.
func immutableKinds(kinds workload.Registry) string {
	var terms []string
	for _, k := range kinds {
		if !k.Mutable {
			terms = append(terms, fmt.Sprintf("(request.kind.group == '%s' && request.kind.kind == '%s')", k.GVK.Group, k.GVK.Kind))
		}
	}
	return strings.Join(terms, " || ")
}
