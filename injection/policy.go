package injection

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/confighash/confighash/workload"
)

// NameLabel is the label the apiserver sets on every namespace to its own
// name. The webhook configuration's selector can only see labels, so the
// exclusions by name are written against it.
const NameLabel = "kubernetes.io/metadata.name"

// Policy decides which namespaces confighash serves. The zero Policy
// excludes kube-system only; use New to exclude confighash's own namespace
// too.
type Policy struct {
	own string
}

// New returns the policy of a confighash running in namespace own. Its own
// namespace is never served, so that confighash can never stand in the way
// of its own recovery.
func New(own string) Policy {
	return Policy{own: own}
}

// Decision is the policy's answer for one namespace.
type Decision struct {
	// Serves is true when confighash stamps and re-stamps workloads there.
	Serves bool
	// Reason says why, for people (confighash status). The webhook never
	// sends it to the caller: for a namespace it does not serve it says
	// nothing that depends on the namespace.
	Reason string
}

// Excluded reports whether namespace name is never served, whatever its
// labels. It needs no read of the namespace.
func (p Policy) Excluded(name string) bool {
	return name == "" || name == metav1.NamespaceSystem || (p.own != "" && name == p.own)
}

// Decide applies the policy to a namespace with the given labels.
func (p Policy) Decide(name string, labels map[string]string) Decision {
	switch {
	case name == "":
		return Decision{Reason: "the object is not namespaced"}
	case p.Excluded(name):
		return Decision{Reason: fmt.Sprintf("namespace %s is never served (confighash excludes kube-system and its own namespace)", name)}
	case labels[workload.InjectionLabel] == workload.InjectionEnabled:
		return Decision{Serves: true, Reason: fmt.Sprintf("namespace %s is labelled %s=%s", name, workload.InjectionLabel, workload.InjectionEnabled)}
	}
	return Decision{Reason: fmt.Sprintf("namespace %s is not labelled %s=%s", name, workload.InjectionLabel, workload.InjectionEnabled)}
}

// NamespaceSelector is the policy as the webhook configuration's
// namespaceSelector, so that the apiserver does not even call the webhook
// for a namespace Decide would refuse. It matches exactly the namespaces
// Decide serves, given that the apiserver sets NameLabel on every
// namespace.
func (p Policy) NamespaceSelector() *metav1.LabelSelector {
	excluded := []string{metav1.NamespaceSystem}
	if p.own != "" && p.own != metav1.NamespaceSystem {
		excluded = append(excluded, p.own)
	}
	return &metav1.LabelSelector{
		MatchLabels: map[string]string{workload.InjectionLabel: workload.InjectionEnabled},
		MatchExpressions: []metav1.LabelSelectorRequirement{{
			Key:      NameLabel,
			Operator: metav1.LabelSelectorOpNotIn,
			Values:   excluded,
		}},
	}
}
