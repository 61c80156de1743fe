// Package injection is confighash's namespace policy: the one answer to
// "does confighash act in this namespace?". A namespace is served when it
// carries the label confighash.dev/injection=enabled and is neither
// kube-system nor confighash's own namespace.
//
// Four places need that answer and all of them ask this package: the
// MutatingWebhookConfiguration's namespaceSelector (NamespaceSelector), the
// admission handler (Check, on every request, before anything else), the
// config-update hook (Check, before it re-stamps) and `confighash status`
// (Decide). The selector alone is not enough: anyone who can reach the
// webhook's port can POST an AdmissionReview naming any namespace, and the
// hook reads namespaces from its cache, not through the selector. When they
// each kept a copy, the hook forgot the exclusions and would have rolled a
// labelled kube-system's CoreDNS.
//
// The package is named for what it decides, injection, the word of the
// label, of the workload opt-out annotation and of status's report. It is
// not part of package workload, which knows where kinds keep their pod
// templates and nothing about namespaces.
package injection
