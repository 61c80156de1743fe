//go:build linux

package controlplane

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// hostNeed is one thing the node needs from the machine, and the Debian
// package that provides it. containerd, runc and the CNI plugins are not
// served by the Go module proxy, but Debian's packages are reachable here.
type hostNeed struct {
	path, pkg string
}

func hostNeeds() []hostNeed {
	return []hostNeed{
		{"containerd", "containerd"},
		{"ctr", "containerd"},
		{"runc", "runc"},
		{filepath.Join(cniBinDir, "bridge"), "containernetworking-plugins"},
		{filepath.Join(cniBinDir, "host-local"), "containernetworking-plugins"},
		{filepath.Join(cniBinDir, "loopback"), "containernetworking-plugins"},
		{"iptables", "iptables"},
		{"ip", "iproute2"},
	}
}

// missingPackages lists the packages whose commands or files are absent.
func missingPackages() []string {
	seen := map[string]bool{}
	var missing []string
	for _, n := range hostNeeds() {
		var err error
		if filepath.IsAbs(n.path) {
			_, err = os.Stat(n.path)
		} else {
			_, err = exec.LookPath(n.path)
		}
		if err != nil && !seen[n.pkg] {
			seen[n.pkg] = true
			missing = append(missing, n.pkg)
		}
	}
	return missing
}

// EnsureNodePackages installs, with apt-get, the Debian packages the node
// needs and the machine lacks. It needs root, as the node itself does (it
// creates a bridge and mounts pod volumes). With everything present it does
// nothing and prints nothing.
func EnsureNodePackages(ctx context.Context, progress io.Writer) error {
	if progress == nil {
		progress = io.Discard
	}
	if os.Geteuid() != 0 {
		return fmt.Errorf("the local node needs root (it runs containerd and a kubelet, creates the %s bridge and mounts pod volumes)", bridgeName)
	}
	missing := missingPackages()
	if len(missing) == 0 {
		return nil
	}
	if err := aptInstall(ctx, progress, missing, "the local node"); err != nil {
		return err
	}
	if still := missingPackages(); len(still) > 0 {
		return fmt.Errorf("after installing, still missing: %s", strings.Join(still, ", "))
	}
	return nil
}

// aptInstall installs Debian packages with apt-get, for what: the harness's
// one way of getting a host program that the Go module proxy does not serve.
func aptInstall(ctx context.Context, progress io.Writer, pkgs []string, what string) error {
	fmt.Fprintf(progress, "installing %s from Debian's packages for %s (first run only; about a minute)…\n", strings.Join(pkgs, ", "), what)
	for _, args := range [][]string{
		{"update", "-qq"},
		append([]string{"install", "-y", "-qq", "--no-install-recommends"}, pkgs...),
	} {
		cmd := exec.CommandContext(ctx, "apt-get", args...)
		cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("apt-get %s: %w\n%s", strings.Join(args, " "), err, lastLines(string(out), tailLines))
		}
	}
	return nil
}
