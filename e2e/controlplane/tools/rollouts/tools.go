//go:build tools

// Package rollouts pins the Argo Rollouts controller that the e2e harness
// builds on demand (see EnsureRollouts). It lives in its own module so that
// the main go.mod never requires argo-rollouts and its Kubernetes v1.34
// dependency tree, and because it needs a newer Go than the main module.
package rollouts

import (
	_ "github.com/argoproj/argo-rollouts/cmd/rollouts-controller"
)
