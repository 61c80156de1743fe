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

// prometheusNeeds are what the monitoring specs run: Debian's prometheus
// package has both the server and promtool.
func prometheusNeeds() []hostNeed {
	return []hostNeed{{"prometheus", "prometheus"}, {"promtool", "prometheus"}}
}

// missingPackages lists the packages whose commands or files are absent.
func missingPackages(needs []hostNeed) []string {
	seen := map[string]bool{}
	var missing []string
	for _, n := range needs {
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
	if os.Geteuid() != 0 {
		return fmt.Errorf("the local node needs root (it runs containerd and a kubelet, creates the %s bridge and mounts pod volumes)", bridgeName)
	}
	return ensurePackages(ctx, progress, "the local node", hostNeeds())
}

// EnsurePrometheus installs Debian's prometheus package (prometheus and
// promtool) when either command is absent, and returns their paths. With
// both present it does nothing and prints nothing; installing needs root.
// The package's service is not used: the specs run their own server.
func EnsurePrometheus(ctx context.Context, progress io.Writer) (server, promtool string, err error) {
	if err := ensurePackages(ctx, progress, "the monitoring specs", prometheusNeeds()); err != nil {
		return "", "", err
	}
	if server, err = exec.LookPath("prometheus"); err != nil {
		return "", "", fmt.Errorf("finding prometheus: %w", err)
	}
	if promtool, err = exec.LookPath("promtool"); err != nil {
		return "", "", fmt.Errorf("finding promtool: %w", err)
	}
	return server, promtool, nil
}

// ensurePackages apt-gets the packages of needs that are missing, for
// purpose (named in the progress message and errors).
func ensurePackages(ctx context.Context, progress io.Writer, purpose string, needs []hostNeed) error {
	if progress == nil {
		progress = io.Discard
	}
	if len(missingPackages(needs)) == 0 {
		return nil
	}
	// make test runs two e2e lanes at once, and apt-get fails, rather than
	// waits, when another holds dpkg's lock: one install at a time, and the
	// second finds what the first installed.
	unlock, err := lockFile(ctx, filepath.Join(os.TempDir(), "confighash-e2e-apt.lock"), "another install of Debian's packages", progress)
	if err != nil {
		return err
	}
	defer unlock()
	missing := missingPackages(needs)
	if len(missing) == 0 {
		return nil
	}
	if os.Geteuid() != 0 {
		return fmt.Errorf("%s need %s from Debian's packages, and installing them needs root", purpose, strings.Join(missing, ", "))
	}
	fmt.Fprintf(progress, "installing %s from Debian's packages for %s (first run only; about a minute)…\n", strings.Join(missing, ", "), purpose)
	for _, args := range [][]string{
		{"update", "-qq"},
		append([]string{"install", "-y", "-qq", "--no-install-recommends"}, missing...),
	} {
		cmd := exec.CommandContext(ctx, "apt-get", args...)
		cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("apt-get %s: %w\n%s", strings.Join(args, " "), err, lastLines(string(out), tailLines))
		}
	}
	if still := missingPackages(needs); len(still) > 0 {
		return fmt.Errorf("after installing, still missing: %s", strings.Join(still, ", "))
	}
	return nil
}
