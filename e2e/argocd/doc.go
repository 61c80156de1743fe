// Package argocd proves with Argo CD's own code that confighash's stamp, and
// the caBundle it injects, do not make applications OutOfSync. It is a module
// of its own: Argo CD v3.6 needs Go 1.27 (GOTOOLCHAIN=go1.27.3) and a replace
// block for the Kubernetes staging modules, none of which the main module
// should carry. It requires the main module (replaced by ../..) for its
// contract (internal/contract, and internal/pinning's names and
// internal/waves' halt reasons) and the specs' stamp reader
// (e2e/framework.TemplateStamp), so it spells none of them itself.
//
// The tests need a cluster with confighash running, named by
// CONFIGHASH_E2E_KUBECONFIG. make test provides one with
//
//	go run ./e2e/cmd/cluster exec --rollouts -- <the test binary>
//
// which starts a throwaway local control plane and confighash, exactly as
// the main e2e specs do, and (--rollouts) Argo Rollouts' CRDs and
// controller, for the Rollout. They sync objects with Argo CD's applier (client-side
// and server-side apply, as argocd-controller) and diff them with Argo CD's
// controller diff (legacy and server-side), with and without the
// ignoreDifferences entries of docs/argocd.md, which they read from that file
// (the argocd-cm form through Argo CD's settings manager), so the page and
// the proof cannot drift apart.
//
// The TestArgoCDController specs go further: Argo CD's own application
// controller and repo-server (built by the harness, controlplane.EnsureArgoCD)
// sync Applications from a local Git repository (file://) onto a cluster
// with a node, and the specs count rollouts in ReplicaSets and read what the
// pods print. They skip on a cluster without a node; make test runs them
// from the same test binary with
//
//	go run ./e2e/cmd/cluster exec --node -- <the test binary> -test.run '^TestArgoCDController'
//
// and the node-less run above skips them by name. Argo CD is started once,
// by the first of them, and stopped by TestMain.
package argocd
