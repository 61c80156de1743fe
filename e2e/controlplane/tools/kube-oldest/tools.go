//go:build tools

// Package kube pins the oldest Kubernetes minor the chart claims: the
// control plane the e2e harness builds to run the specs the Makefile's
// E2E_OLDEST_SPECS names (make e2e-oldest). Only the control plane: those
// specs run no node. It lives in its own module, as tools/kube does, since
// one go.mod can require one version of k8s.io/kubernetes.
package kube

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kubectl"
)
