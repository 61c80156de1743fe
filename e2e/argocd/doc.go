// Package argocd proves with Argo CD's own diff code that confighash's stamp
// does not make applications OutOfSync. It is a module of its own: Argo CD
// v3.6 needs Go 1.27 (GOTOOLCHAIN=go1.27.3) and a replace block for the
// Kubernetes staging modules, none of which the main module should carry.
//
// The live objects come from the local control plane: the e2e spec
// TestArgoCDLiveObjects in the main module saves them into the directory
// named by CONFIGHASH_ARGOCD_DIR, and make test runs the two in order.
package argocd
