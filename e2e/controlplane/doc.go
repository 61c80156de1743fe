//go:build linux

// Package controlplane runs a real, local Kubernetes control plane (etcd,
// kube-apiserver and kube-controller-manager) for the end-to-end tests.
//
// There is no container runtime on the machines that run these tests, so the
// binaries are built from the Go module proxy into <repo>/bin (see
// EnsureBinaries; EnsureKubernetes builds the control plane of the oldest
// minor the chart claims too) and started as plain processes on loopback
// ports (see Start).
// Without a node, Pods stay Pending, but everything the API server and the
// controller-manager do (admission webhooks, Deployments, ReplicaSets,
// garbage collection, ServiceAccounts) is the real thing. With
// Options.Node, it also runs a kubelet, kube-scheduler and kube-proxy built
// from the same module, on containerd, runc and the CNI plugins from the
// host's packages, so Pods really run. EnsureRollouts builds the Argo
// Rollouts controller the same way, on demand, and EnsureArgoCD Argo CD's
// application controller and repo-server (one binary), which StartArgoCD
// runs out of cluster with Debian's redis-server (apt-get on first use, as
// the node's packages), its CRDs and settings objects installed.
//
// Stopping (Stop, StopDetached) finishes in bounded time whatever state the
// cluster is in: each process gets SIGTERM, a grace, then SIGKILL to its
// group; each host command (ctr, iptables, ip, kube-proxy --cleanup) a
// timeout, after which its whole process group is killed; and each step a
// bound after which it is left behind and reported, so the next one still
// runs (see stopBounds). A slow step says so on the progress writer. A
// `cluster down` once waited more than 5 minutes on a wedged node.
//
// The package is Linux-only: it relies on process groups, Pdeathsig and /proc.
//
// It stays in the root module, though it is a small project of its own.
// As its own module, the root module would need a replace directive for it
// (the e2e specs import it through e2e/framework), which breaks
// `go install github.com/confighash/confighash/cmd/confighash@version`, or
// a go.work that every command then depends on. What a separate module would
// buy, keeping its tests out of `go test ./...`, is small: they take about
// 20 s there, and the product's packages import nothing from e2e/.
package controlplane
