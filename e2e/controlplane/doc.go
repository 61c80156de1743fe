//go:build linux

// Package controlplane runs a real, local Kubernetes control plane (etcd,
// kube-apiserver and kube-controller-manager) for the end-to-end tests.
//
// There is no container runtime on the machines that run these tests, so the
// binaries are built from the Go module proxy into <repo>/bin (see
// EnsureBinaries) and started as plain processes on loopback ports (see Start).
// There is no kubelet and no scheduler: Pods stay Pending, but everything the
// API server and the controller-manager do (admission webhooks, Deployments,
// ReplicaSets, garbage collection, ServiceAccounts) is the real thing.
//
// The package is Linux-only: it relies on process groups, Pdeathsig and /proc.
package controlplane
