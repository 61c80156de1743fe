//go:build tools

// Package kube pins the Kubernetes binaries that the e2e harness builds: the
// control plane, and the kubelet, scheduler and kube-proxy of its optional
// node. It lives in its own module so that the main go.mod never requires
// k8s.io/kubernetes.
package kube

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-proxy"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kubectl"
	_ "k8s.io/kubernetes/cmd/kubelet"
)
