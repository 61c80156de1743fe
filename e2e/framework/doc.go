// Package framework sets up what the e2e specs run against, so that the
// specs themselves do not care where the cluster comes from.
//
// By default it builds and starts the local control plane (package
// controlplane) and runs the confighash binary beside it in out-of-cluster
// mode. With CONFIGHASH_E2E_KUBECONFIG set, it uses that cluster instead and
// drives the confighash Deployment installed there (make e2e-kind).
//
// Env also carries the steps both suites (e2e and e2e/incluster) take, each
// failing the test on an error: SpecContext, NewNamespace, Create, Update,
// Kubectl, StampOf, ReplicaSets and CurrentReplicaSet. They live here, one
// definition each, so the two suites cannot drift apart. TemplateStamp is
// the one reader of the stamp on a workload's pod template; it reads the
// object's fields itself, not through the product's kind table, so a spec
// does not check confighash against its own idea of where a template is.
// The package builds with or without the e2e tag (the demo and cluster
// commands use it too).
package framework
