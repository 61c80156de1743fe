package injection

import (
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/confighash/confighash/internal/contract"
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
	// only, when not empty, lists the only namespaces served (namespaced
	// mode, --namespaces): confighash caches and may read nothing else, so
	// it must not claim to serve anything else either.
	only []string
}

// New returns the policy of a confighash running in namespace own. Its own
// namespace is never served, so that confighash can never stand in the way
// of its own recovery. With only, confighash serves no namespace outside
// that list, labelled or not.
func New(own string, only ...string) Policy {
	return Policy{own: own, only: slices.Clone(only)}
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
// labels. It needs no read of the namespace, so the webhook answers a
// namespace outside --namespaces without touching it.
func (p Policy) Excluded(name string) bool {
	return p.alwaysExcluded(name) || p.outsideOnly(name)
}

func (p Policy) alwaysExcluded(name string) bool {
	return name == "" || name == metav1.NamespaceSystem || (p.own != "" && name == p.own)
}

func (p Policy) outsideOnly(name string) bool {
	return len(p.only) > 0 && !slices.Contains(p.only, name)
}

// Decide applies the policy to a namespace with the given labels.
func (p Policy) Decide(name string, labels map[string]string) Decision {
	switch {
	case name == "":
		return Decision{Reason: "the object is not namespaced"}
	case p.alwaysExcluded(name):
		return Decision{Reason: fmt.Sprintf("namespace %s is never served (confighash excludes kube-system and its own namespace)", name)}
	case p.outsideOnly(name):
		return Decision{Reason: fmt.Sprintf("namespace %s is not served (confighash runs with --namespaces=%s)", name, strings.Join(p.only, ","))}
	case labels[contract.InjectionLabel] == contract.InjectionEnabled:
		return Decision{Serves: true, Reason: fmt.Sprintf("namespace %s is labelled %s=%s", name, contract.InjectionLabel, contract.InjectionEnabled)}
	}
	return Decision{Reason: fmt.Sprintf("namespace %s is not labelled %s=%s", name, contract.InjectionLabel, contract.InjectionEnabled)}
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
	exprs := []metav1.LabelSelectorRequirement{{
		Key:      NameLabel,
		Operator: metav1.LabelSelectorOpNotIn,
		Values:   excluded,
	}}
	if len(p.only) > 0 {
		exprs = append(exprs, metav1.LabelSelectorRequirement{
			Key:      NameLabel,
			Operator: metav1.LabelSelectorOpIn,
			Values:   slices.Clone(p.only),
		})
	}
	return &metav1.LabelSelector{
		MatchLabels:      map[string]string{contract.InjectionLabel: contract.InjectionEnabled},
		MatchExpressions: exprs,
	}
}
