//go:build linux

package controlplane

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// criNamespace is containerd's namespace for what the kubelet runs; images
// must be imported there for pods to find them.
const criNamespace = "k8s.io"

// cniBinDir is where Debian's containernetworking-plugins puts the plugins
// (not the upstream default /opt/cni/bin).
const cniBinDir = "/usr/lib/cni"

// containerdConfig keeps all of containerd's state under the node directory
// and sets what this kind of machine needs:
//   - restrict_oom_score_adj: without CAP_SYS_RESOURCE the sandbox's
//     oom_score_adj of -998 fails with runc's opaque "can't get final child's
//     PID from pipe: EOF";
//   - sandbox_image: a locally imported image, since nothing can be pulled;
//   - netns_mounts_under_state_dir: pod network namespaces are mounted under
//     the node directory, so Stop finds any left behind there instead of in
//     the machine-wide /var/run/netns;
//   - registry config_path: how to reach each registry is read from
//     <node>/registry-hosts/<host>/hosts.toml at every pull, so a registry
//     that starts after containerd (MirrorRegistry) is found without a
//     restart, and no machine-wide /etc/containerd/certs.d is touched.
func containerdConfig(f nodeFiles, sandboxImage string) string {
	return fmt.Sprintf(`version = 2
root = %q
state = %q

[grpc]
  address = %q

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = %q
  restrict_oom_score_adj = true
  netns_mounts_under_state_dir = true

[plugins."io.containerd.grpc.v1.cri".cni]
  bin_dir = %q
  conf_dir = %q

[plugins."io.containerd.grpc.v1.cri".registry]
  config_path = %q
`, filepath.Join(f.dir, "containerd-root"), filepath.Join(f.dir, "containerd-state"), f.containerdSock,
		sandboxImage, cniBinDir, f.cniConfDir, f.registryHosts)
}

// cniConfig is a bridge network on the node's subnet. isGateway gives the
// bridge the gateway address, which is also the API server's. No ipMasq:
// pods need nothing outside the machine, and masquerading would add iptables
// rules to clean up. The IPAM state lives under the node directory.
func cniConfig(f nodeFiles) string {
	return fmt.Sprintf(`{
  "cniVersion": "0.4.0",
  "name": "confighash",
  "plugins": [
    {
      "type": "bridge",
      "bridge": %q,
      "isGateway": true,
      "ipMasq": false,
      "hairpinMode": true,
      "ipam": {
        "type": "host-local",
        "dataDir": %q,
        "ranges": [[{"subnet": %q, "gateway": %q}]],
        "routes": [{"dst": "0.0.0.0/0"}]
      }
    },
    {"type": "loopback"}
  ]
}
`, bridgeName, filepath.Join(f.dir, "cni-ipam"), podCIDR, nodeIP)
}

// writeContainerdFiles writes containerd's config and the CNI network.
func writeContainerdFiles(f nodeFiles, sandboxImage string) error {
	for _, dir := range []string{f.cniConfDir, f.registryHosts} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("creating %s: %w", dir, err)
		}
	}
	for path, data := range map[string]string{
		f.containerdConf: containerdConfig(f, sandboxImage),
		filepath.Join(f.cniConfDir, "10-confighash.conflist"): cniConfig(f),
	} {
		if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
			return fmt.Errorf("writing %s: %w", path, err)
		}
	}
	return nil
}

func containerdArgs(f nodeFiles) []string {
	return []string{"--config", f.containerdConf}
}

// ctr runs containerd's CLI against the node's containerd, in the CRI
// namespace.
func ctr(ctx context.Context, f nodeFiles, args ...string) (string, error) {
	full := append([]string{"--address", f.containerdSock, "--namespace", criNamespace}, args...)
	cmd := hostCommand(ctx, "ctr", full...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return out.String(), fmt.Errorf("ctr %s: %w\n%s", strings.Join(args, " "), err, out.String())
	}
	return out.String(), nil
}

// containerdServing reports whether containerd answers on its socket.
func containerdServing(f nodeFiles) func(context.Context) error {
	return func(ctx context.Context) error {
		_, err := ctr(ctx, f, "version")
		return err
	}
}

// importImage loads an image tarball into the node's containerd, where the
// kubelet finds it by reference without pulling.
func importImage(ctx context.Context, f nodeFiles, tarball string) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	if _, err := ctr(ctx, f, "images", "import", tarball); err != nil {
		return fmt.Errorf("importing %s: %w", tarball, err)
	}
	return nil
}

// killTasks kills every container and sandbox that containerd still runs.
// The kubelet has normally stopped them; this is the fallback for a node
// whose pods could not be drained, because the shims and the processes they
// run outlive a killed containerd. Each ctr call gets perCall at most, and
// the whole ends with ctx: a wedged containerd costs that, not forever. A
// task that is already gone counts as deleted.
func killTasks(ctx context.Context, f nodeFiles, perCall time.Duration) error {
	call := func(args ...string) (string, error) {
		ctx, cancel := context.WithTimeout(ctx, perCall)
		defer cancel()
		return ctr(ctx, f, args...)
	}
	out, err := call("tasks", "ls", "--quiet")
	if err != nil {
		return err
	}
	ids := strings.Fields(out)
	for _, id := range ids {
		_, _ = call("tasks", "kill", "--signal", "SIGKILL", id)
	}
	var errs []error
	for _, id := range ids {
		// Deleting the task waits for the process and lets its shim exit.
		for {
			out, err := call("tasks", "delete", "--force", id)
			if err == nil || strings.Contains(out, "not found") {
				break
			}
			if ctx.Err() != nil {
				errs = append(errs, fmt.Errorf("deleting task %s: %w", id, err))
				break
			}
			select {
			case <-ctx.Done():
			case <-time.After(100 * time.Millisecond):
			}
		}
	}
	return errors.Join(errs...)
}
