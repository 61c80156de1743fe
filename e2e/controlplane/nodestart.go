//go:build linux

package controlplane

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/confighash/confighash/e2e/images"
)

// nodeAPIServerArgs are what the API server needs beyond the loopback set
// once a node runs (a flag given again overrides the earlier value, so the
// caller appends these and the loopback defaults are replaced):
//   - it listens on, and advertises, the bridge address, and the default
//     endpoint reconciler publishes that as the `kubernetes` Service's
//     endpoint, which pods reach through kube-proxy;
//   - enable-aggregator-routing makes it call webhooks (and aggregated APIs)
//     at their Service's endpoint addresses, pod IPs on the bridge, rather
//     than at the ClusterIP, which only kube-proxy's rules would route;
//   - it calls the kubelet (kubectl logs) at the node's InternalIP, because
//     the node name does not resolve, with the admin client certificate.
func nodeAPIServerArgs(files pkiFiles) []string {
	return []string{
		"--bind-address=" + nodeIP,
		"--advertise-address=" + nodeIP,
		"--endpoint-reconciler-type=lease",
		"--enable-aggregator-routing=true",
		"--kubelet-preferred-address-types=InternalIP",
		"--kubelet-client-certificate=" + files.AdminCert,
		"--kubelet-client-key=" + files.AdminKey,
	}
}

// nodeSteps are the processes of the node, started after the control plane:
// the scheduler, containerd, the kubelet (with the sandbox image imported
// first), ready once its node is schedulable, and kube-proxy.
func (cp *ControlPlane) nodeSteps(ctx context.Context, bins Binaries, files pkiFiles, ports []int, opts Options) []step {
	f, progress := *cp.node, opts.progress()
	schedulerPort, kubeletPort, kubeletHealthz, proxyHealthz, proxyMetrics := ports[0], ports[1], ports[2], ports[3], ports[4]
	sandbox := images.Sandbox()
	return []step{
		{name: "kube-scheduler", path: bins.Scheduler, args: schedulerArgs(cp.Kubeconfig, schedulerPort),
			timeout: schedulerStartTimeout, ready: httpsHealthy(schedulerPort)},
		{name: "containerd", path: "containerd", args: containerdArgs(f),
			before: func() error {
				if err := os.MkdirAll(f.dir, 0o755); err != nil {
					return fmt.Errorf("creating %s: %w", f.dir, err)
				}
				// For `cluster down` from another process, which has no
				// Binaries to find kube-proxy's --cleanup with.
				if err := os.WriteFile(filepath.Join(f.dir, "kube-proxy-path"), []byte(bins.Proxy), 0o644); err != nil {
					return fmt.Errorf("recording kube-proxy path: %w", err)
				}
				return writeContainerdFiles(f, sandbox.Ref)
			},
			timeout: containerdStartTimeout, ready: containerdServing(f)},
		{name: "kubelet", path: bins.Kubelet, args: kubeletArgs(f, cp.Kubeconfig),
			before: func() error {
				// The sandbox image must be there before the kubelet asks
				// for its first pod; containerd is up by now.
				root, err := RepoRoot()
				if err != nil {
					return err
				}
				fmt.Fprintln(progress, "building and importing the sandbox image…")
				tar, err := images.Build(ctx, root, filepath.Join(f.dir, "images"), sandbox)
				if err != nil {
					return err
				}
				if err := importImage(ctx, f, tar); err != nil {
					return err
				}
				return writeKubeletConfig(f, kubeletPort, kubeletHealthz, files.CACert, opts.MaxPods)
			},
			timeout: kubeletStartTimeout, ready: nodeSchedulable(cp.client)},
		// After the kubelet: kube-proxy waits for its Node object to learn
		// the node's addresses, and reports healthy only then.
		{name: "kube-proxy", path: bins.Proxy, args: proxyArgs(cp.Kubeconfig, proxyHealthz, proxyMetrics),
			timeout: proxyStartTimeout, ready: httpHealthy(proxyHealthz)},
	}
}

// ImportImage loads an image tarball into the node's containerd, so that
// pods can run it without a registry. It fails on a cluster without a node.
func (cp *ControlPlane) ImportImage(ctx context.Context, tarball string) error {
	if cp.node == nil {
		return errors.New("controlplane: ImportImage needs a cluster started with Options.Node")
	}
	return importImage(ctx, *cp.node, tarball)
}

// ImportImageDetached loads an image tarball into the node of the detached
// cluster (Options.Detached, `cluster up`) whose state directory is dir, from
// any process.
func ImportImageDetached(ctx context.Context, dir, tarball string) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return fmt.Errorf("resolving %s: %w", dir, err)
	}
	f := newNodeFiles(abs)
	if _, err := os.Stat(f.containerdSock); err != nil {
		return fmt.Errorf("no node in %s (a cluster started with a node must be up): %w", abs, err)
	}
	return importImage(ctx, f, tarball)
}

// drainNode stops the pods before the node's processes go away, so that the
// kubelet tears down their mounts and containerd their network namespaces,
// which a killed kubelet and containerd would leave behind. The controller
// manager and the scheduler stop first: nothing may recreate or place a pod
// while the node empties. Whatever still runs after the wait (b.drain at
// most) is killed through containerd (b.tasks at most).
func (cp *ControlPlane) drainNode(parent context.Context, b stopBounds) error {
	ctx, cancel := context.WithTimeout(parent, b.drain)
	defer cancel()
	var errs []error
	for _, p := range cp.procs {
		if p.name == "kube-controller-manager" || p.name == "kube-scheduler" {
			errs = append(errs, p.stop())
		}
	}
	if cp.client != nil && cp.running("kubelet") {
		zero := int64(0)
		nss, err := cp.client.CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
		if err == nil {
			for _, ns := range nss.Items {
				_ = cp.client.CoreV1().Pods(ns.Name).DeleteCollection(ctx, metav1.DeleteOptions{GracePeriodSeconds: &zero}, metav1.ListOptions{})
			}
		}
		// The kubelet notices the deletions within a second or two and
		// stops the pods; wait until containerd runs nothing.
		for ctx.Err() == nil {
			out, err := ctr(ctx, *cp.node, "tasks", "ls", "--quiet")
			if err != nil || strings.TrimSpace(out) == "" {
				break
			}
			select {
			case <-ctx.Done():
			case <-time.After(500 * time.Millisecond):
			}
		}
	}
	if cp.running("containerd") {
		ctx, cancel := context.WithTimeout(parent, b.tasks)
		defer cancel()
		errs = append(errs, killTasks(ctx, *cp.node, b.command))
	}
	return errors.Join(errs...)
}

func (cp *ControlPlane) running(name string) bool {
	for _, p := range cp.procs {
		if p.name == name {
			return !p.exited()
		}
	}
	return false
}

// cleanupNodeHost undoes what the node did to the machine once its
// processes are gone: kube-proxy's and the kubelet's iptables rules, any
// containerd shim still alive, mounts under the node directory, and the
// bridge. It tolerates a node that never fully started. Each command gets
// perCommand at most; the kills and unmounts run even when ctx has ended,
// since they cannot hang on a lock or a socket.
func cleanupNodeHost(ctx context.Context, f nodeFiles, perCommand time.Duration) error {
	if _, err := os.Stat(f.dir); errors.Is(err, os.ErrNotExist) {
		return deleteBridge(ctx, perCommand)
	}
	var errs []error
	if proxy, err := os.ReadFile(filepath.Join(f.dir, "kube-proxy-path")); err == nil {
		if _, err := runHost(ctx, perCommand, string(proxy), "--cleanup"); err != nil {
			errs = append(errs, fmt.Errorf("kube-proxy --cleanup: %w", err))
		}
	}
	errs = append(errs, removeKubeletChains(ctx, perCommand), killShims(f), unmountUnder(f.dir), deleteBridge(ctx, perCommand))
	return errors.Join(errs...)
}

// killShims kills containerd-shim processes serving this node's containerd
// (they name its socket in their arguments), and with them any container
// they still hold. Normally there are none left by now.
func killShims(f nodeFiles) error {
	procs, err := hostProcesses()
	if err != nil {
		return err
	}
	for _, p := range procs {
		if p.mentions("containerd-shim") && p.mentions(f.containerdSock) {
			_ = killProcessTree(p.pid)
		}
	}
	return nil
}
