//go:build tools

// Package helm pins the Helm CLI that the e2e harness builds on demand (see
// EnsureHelm), for the spec that runs the README's install commands with the
// binary a user runs. Its own module, like the other tools: Helm's
// dependency tree stays out of the main go.mod. The version is e2e/deploy's
// Helm SDK's, so the two share most of their compiled packages.
package helm

import (
	_ "helm.sh/helm/v3/cmd/helm"
)
