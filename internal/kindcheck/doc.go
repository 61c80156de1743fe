// Package kindcheck tells whether the apiserver serves a custom workload kind
// (one configured with --workload-kind, or Argo Rollouts' Rollout), and
// whether the template path configured for it leads to a pod template in the
// schema the apiserver publishes. A wrong path would otherwise be a silent
// no-op: the webhook would find no template and stamp nothing.
package kindcheck
