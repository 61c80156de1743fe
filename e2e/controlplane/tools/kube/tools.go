//go:build tools

// Package kube pins the Kubernetes control-plane binaries that the e2e
// harness builds. It lives in its own module so that the main go.mod never
// requires k8s.io/kubernetes.
package kube

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kubectl"
)
