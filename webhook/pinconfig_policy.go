package webhook

import (
	"fmt"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/confighash/confighash/internal/injection"
	"github.com/confighash/confighash/internal/pinning"
)

// The ValidatingAdmissionPolicies that bound pinning (PinPolicies); each has
// a binding of the same name.
const (
	// PinnerPolicyName bounds what confighash's ServiceAccount may write
	// outside its own namespace: snapshots, in pinning namespaces.
	PinnerPolicyName = "confighash-pinner"
	// SnapshotLabelPolicyName keeps everyone else from making an object a
	// snapshot.
	SnapshotLabelPolicyName = "confighash-snapshot-label"
	// snapshotNameInfix is in every snapshot's name (pinning.Name; a test
	// holds the two together).
	snapshotNameInfix = "-pin-"
)

// PinPolicies are the ValidatingAdmissionPolicies and their bindings that
// bound the pinner's grant (the ClusterRole confighash-pinner, bound per
// namespace), for confighash running as ServiceAccount serviceAccount in
// namespace. The manifests are tested against them.
//
//   - confighash-pinner: outside its own namespace, confighash's
//     ServiceAccount creates and updates only snapshot-shaped ConfigMaps and
//     Secrets (the snapshot label, a name with the snapshot infix,
//     immutable, a Secret only of type Opaque; an update only of an object
//     labelled so already), only in namespaces labelled for pinning, and
//     deletes only snapshots. Its own namespace is left out
//     by the binding: the HMAC key, the serving certificate, the CA bundle
//     and the settings are written there.
//   - confighash-snapshot-label: nobody else creates an object carrying the
//     snapshot label or adds it to one. An update that keeps the label as it
//     was passes: the garbage collector removes an owner reference from a
//     snapshot whose revision is gone.
//
// A snapshot is used only if its name and seal verify under confighash's
// key (package pinning), so a forged one is never used; the second policy
// keeps tenants from making objects that look like confighash's, which
// kubectl's --prune, a quota and an operator reading labels would take for
// its own.
func PinPolicies(namespace, serviceAccount string) ([]admissionregistrationv1.ValidatingAdmissionPolicy, []admissionregistrationv1.ValidatingAdmissionPolicyBinding) {
	user := fmt.Sprintf("system:serviceaccount:%s:%s", namespace, serviceAccount)
	fail := admissionregistrationv1.Fail
	// A refusal is a 403, as RBAC's, so the pinner reports it as forbidden.
	forbidden := metav1.StatusReasonForbidden
	equivalent := admissionregistrationv1.Equivalent
	scope := admissionregistrationv1.NamespacedScope
	rules := func(ops ...admissionregistrationv1.OperationType) []admissionregistrationv1.NamedRuleWithOperations {
		return []admissionregistrationv1.NamedRuleWithOperations{{RuleWithOperations: admissionregistrationv1.RuleWithOperations{
			Operations: ops,
			Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps", "secrets"}, Scope: &scope},
		}}}
	}
	create, update, del := admissionregistrationv1.Create, admissionregistrationv1.Update, admissionregistrationv1.Delete
	// hasLabel is a CEL test that obj carries the snapshot label.
	hasLabel := func(obj string) string {
		return fmt.Sprintf("has(%s.metadata.labels) && '%s' in %s.metadata.labels", obj, pinning.SnapshotLabel, obj)
	}
	pinner := admissionregistrationv1.ValidatingAdmissionPolicy{
		TypeMeta:   metav1.TypeMeta{APIVersion: "admissionregistration.k8s.io/v1", Kind: "ValidatingAdmissionPolicy"},
		ObjectMeta: metav1.ObjectMeta{Name: PinnerPolicyName, Labels: map[string]string{"app.kubernetes.io/name": "confighash"}},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: &fail,
			MatchConstraints: &admissionregistrationv1.MatchResources{
				ResourceRules: rules(create, update, del),
				MatchPolicy:   &equivalent,
			},
			MatchConditions: []admissionregistrationv1.MatchCondition{{
				Name: "confighash", Expression: fmt.Sprintf("request.userInfo.username == '%s'", user),
			}},
			Variables: []admissionregistrationv1.Variable{
				// The object written, or the one deleted.
				{Name: "obj", Expression: "request.operation == 'DELETE' ? oldObject : object"},
			},
			Validations: []admissionregistrationv1.Validation{
				{
					Expression: fmt.Sprintf("request.operation == 'DELETE' || (has(namespaceObject.metadata.labels) && '%s' in namespaceObject.metadata.labels && namespaceObject.metadata.labels['%s'] == '%s')",
						pinning.NamespaceLabel, pinning.NamespaceLabel, pinning.NamespaceEnabled),
					Message: fmt.Sprintf("confighash writes ConfigMaps and Secrets outside its namespace only in namespaces labelled %s=%s", pinning.NamespaceLabel, pinning.NamespaceEnabled),
					Reason:  &forbidden,
				},
				{
					Expression: fmt.Sprintf("%s && variables.obj.metadata.labels['%s'] == 'true'", hasLabel("variables.obj"), pinning.SnapshotLabel),
					Message:    fmt.Sprintf("confighash writes outside its namespace only snapshots, labelled %s=true", pinning.SnapshotLabel),
					Reason:     &forbidden,
				},
				{
					// It never makes another object a snapshot: it
					// patches only snapshots it verified.
					Expression: fmt.Sprintf("request.operation != 'UPDATE' || (%s)", hasLabel("oldObject")),
					Message:    fmt.Sprintf("confighash updates outside its namespace only objects labelled %s already", pinning.SnapshotLabel),
					Reason:     &forbidden,
				},
				{
					Expression: fmt.Sprintf("variables.obj.metadata.name.contains('%s')", snapshotNameInfix),
					Message:    fmt.Sprintf("a snapshot's name has %q in it", snapshotNameInfix),
					Reason:     &forbidden,
				},
				{
					Expression: "request.operation == 'DELETE' || (has(object.immutable) && object.immutable == true)",
					Message:    "a snapshot is immutable",
					Reason:     &forbidden,
				},
				{
					Expression: "request.kind.kind != 'Secret' || !has(variables.obj.type) || variables.obj.type == '' || variables.obj.type == 'Opaque'",
					Message:    "a Secret's snapshot is of type Opaque: typed Secrets (service account tokens, TLS, registry credentials) are never copied",
					Reason:     &forbidden,
				},
			},
		},
	}
	label := admissionregistrationv1.ValidatingAdmissionPolicy{
		TypeMeta:   metav1.TypeMeta{APIVersion: "admissionregistration.k8s.io/v1", Kind: "ValidatingAdmissionPolicy"},
		ObjectMeta: metav1.ObjectMeta{Name: SnapshotLabelPolicyName, Labels: map[string]string{"app.kubernetes.io/name": "confighash"}},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: &fail,
			MatchConstraints: &admissionregistrationv1.MatchResources{
				ResourceRules: rules(create, update),
				MatchPolicy:   &equivalent,
			},
			// Only writes whose result carries the label, by anyone else,
			// are evaluated: every other ConfigMap or Secret write passes
			// without a check.
			MatchConditions: []admissionregistrationv1.MatchCondition{
				{Name: "not-confighash", Expression: fmt.Sprintf("request.userInfo.username != '%s'", user)},
				{Name: "labelled-snapshot", Expression: hasLabel("object")},
			},
			Validations: []admissionregistrationv1.Validation{{
				Expression: fmt.Sprintf("request.operation == 'UPDATE' && %s && oldObject.metadata.labels['%s'] == object.metadata.labels['%s']",
					hasLabel("oldObject"), pinning.SnapshotLabel, pinning.SnapshotLabel),
				Message: fmt.Sprintf("only confighash creates objects labelled %s or adds that label", pinning.SnapshotLabel),
				Reason:  &forbidden,
			}},
		},
	}
	deny := []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny}
	binding := func(policy string, sel *metav1.LabelSelector) admissionregistrationv1.ValidatingAdmissionPolicyBinding {
		b := admissionregistrationv1.ValidatingAdmissionPolicyBinding{
			TypeMeta:   metav1.TypeMeta{APIVersion: "admissionregistration.k8s.io/v1", Kind: "ValidatingAdmissionPolicyBinding"},
			ObjectMeta: metav1.ObjectMeta{Name: policy, Labels: map[string]string{"app.kubernetes.io/name": "confighash"}},
			Spec:       admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: policy, ValidationActions: deny},
		}
		if sel != nil {
			b.Spec.MatchResources = &admissionregistrationv1.MatchResources{NamespaceSelector: sel}
		}
		return b
	}
	own := &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{
		Key: injection.NameLabel, Operator: metav1.LabelSelectorOpNotIn, Values: []string{namespace},
	}}}
	return []admissionregistrationv1.ValidatingAdmissionPolicy{pinner, label},
		[]admissionregistrationv1.ValidatingAdmissionPolicyBinding{binding(PinnerPolicyName, own), binding(SnapshotLabelPolicyName, nil)}
}
