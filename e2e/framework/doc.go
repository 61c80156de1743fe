// Package framework sets up what the e2e specs run against, so that the
// specs themselves do not care where the cluster comes from.
//
// By default it builds and starts the local control plane (package
// controlplane) and runs the confighash binary beside it in out-of-cluster
// mode. With CONFIGHASH_E2E_KUBECONFIG set, it uses that cluster instead and
// drives the confighash Deployment installed there (make e2e-kind).
package framework
