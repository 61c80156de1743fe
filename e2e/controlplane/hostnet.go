//go:build linux

package controlplane

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strings"
	"syscall"
	"time"
)

// ensureBridge creates the pod bridge with the node address before the API
// server starts, because the API server binds to that address. The CNI
// bridge plugin later adopts the existing bridge. A bridge left by a killed
// run is reused.
func ensureBridge() error {
	if err := exec.Command("ip", "link", "show", bridgeName).Run(); err != nil {
		if out, err := exec.Command("ip", "link", "add", bridgeName, "type", "bridge").CombinedOutput(); err != nil {
			return fmt.Errorf("creating bridge %s: %w: %s", bridgeName, err, out)
		}
	}
	// "File exists" just means the address is already there.
	if out, err := exec.Command("ip", "addr", "add", nodeIP+"/24", "dev", bridgeName).CombinedOutput(); err != nil && !strings.Contains(string(out), "File exists") {
		return fmt.Errorf("adding %s to %s: %w: %s", nodeIP, bridgeName, err, out)
	}
	if out, err := exec.Command("ip", "link", "set", bridgeName, "up").CombinedOutput(); err != nil {
		return fmt.Errorf("bringing %s up: %w: %s", bridgeName, err, out)
	}
	return nil
}

// deleteBridge removes the pod bridge; the veths of stopped pods are gone
// with their network namespaces. Each command gets timeout at most.
func deleteBridge(ctx context.Context, timeout time.Duration) error {
	if _, err := runHost(ctx, timeout, "ip", "link", "show", bridgeName); err != nil {
		return nil //nolint:nilerr // no such link: already gone
	}
	if _, err := runHost(ctx, timeout, "ip", "link", "delete", bridgeName); err != nil {
		return fmt.Errorf("deleting bridge %s: %w", bridgeName, err)
	}
	return nil
}

// kubeletChains are the iptables chains the kubelet creates and never
// removes, by table. KUBE-FIREWALL in particular drops traffic from
// non-loopback sources to 127.0.0.0/8, which would break the next run's
// loopback setup.
func kubeletChains() map[string][]string {
	return map[string][]string{
		"filter": {"KUBE-FIREWALL", "KUBE-KUBELET-CANARY"},
		"nat":    {"KUBE-KUBELET-CANARY"},
		// KUBE-IPTABLES-HINT tells iptables wrappers which backend is in
		// use; empty and harmless, but the machine should end as it began.
		"mangle": {"KUBE-KUBELET-CANARY", "KUBE-IPTABLES-HINT"},
	}
}

// removeKubeletChains deletes the jumps to the kubelet's chains, then the
// chains. Absent chains are fine: the kubelet may not have got that far.
// Each iptables call gets timeout at most, and none starts once ctx ended.
func removeKubeletChains(ctx context.Context, timeout time.Duration) error {
	var errs []error
	for table, chains := range kubeletChains() {
		if ctx.Err() != nil {
			return errors.Join(append(errs, fmt.Errorf("iptables table %s: %w", table, context.Cause(ctx)))...)
		}
		rules, err := runHost(ctx, timeout, "iptables", "-t", table, "-S")
		if err != nil {
			errs = append(errs, fmt.Errorf("listing iptables table %s: %w", table, err))
			continue
		}
		for _, chain := range chains {
			for _, rule := range jumpsTo(rules, chain) {
				args := append([]string{"-t", table, "-D"}, rule...)
				if _, err := runHost(ctx, timeout, "iptables", args...); err != nil {
					errs = append(errs, err)
				}
			}
			if !strings.Contains(rules, "-N "+chain+"\n") {
				continue
			}
			for _, op := range []string{"-F", "-X"} {
				if _, err := runHost(ctx, timeout, "iptables", "-t", table, op, chain); err != nil {
					errs = append(errs, err)
				}
			}
		}
	}
	return errors.Join(errs...)
}

// jumpsTo returns, from `iptables -S` output, the rules of other chains that
// jump to chain, as arguments for -D (chain name first).
func jumpsTo(rules, chain string) [][]string {
	var out [][]string
	sc := bufio.NewScanner(strings.NewReader(rules))
	for sc.Scan() {
		f := ruleFields(sc.Text())
		if len(f) < 2 || f[0] != "-A" || f[1] == chain {
			continue
		}
		for i := 2; i+1 < len(f); i++ {
			if f[i] == "-j" && f[i+1] == chain {
				out = append(out, f[1:])
				break
			}
		}
	}
	return out
}

// ruleFields splits a line of `iptables -S` into arguments. Comments with
// spaces are printed in double quotes; an argument list for exec needs them
// whole and unquoted.
func ruleFields(line string) []string {
	var out []string
	var cur strings.Builder
	quoted, inField := false, false
	for _, r := range line {
		switch {
		case r == '"':
			quoted, inField = !quoted, true
		case r == ' ' && !quoted:
			if inField {
				out = append(out, cur.String())
				cur.Reset()
				inField = false
			}
		default:
			cur.WriteRune(r)
			inField = true
		}
	}
	if inField {
		out = append(out, cur.String())
	}
	return out
}

// unmountUnder lazily unmounts every mount point below dir, deepest first:
// pod volumes (tmpfs for Secrets and projected tokens), containerd's
// snapshots and the pods' network namespaces. Without this the directory
// cannot be removed and the mounts pile up across runs.
func unmountUnder(dir string) error {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return fmt.Errorf("reading mounts: %w", err)
	}
	defer f.Close()
	var points []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 5 {
			continue
		}
		// The kernel escapes spaces and the like as octal; our paths have none.
		if p := fields[4]; p == dir || strings.HasPrefix(p, dir+"/") {
			points = append(points, p)
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("reading mounts: %w", err)
	}
	sort.Sort(sort.Reverse(sort.StringSlice(points)))
	var errs []error
	for _, p := range points {
		if err := syscall.Unmount(p, syscall.MNT_DETACH); err != nil && !errors.Is(err, syscall.EINVAL) && !errors.Is(err, syscall.ENOENT) {
			errs = append(errs, fmt.Errorf("unmounting %s: %w", p, err))
		}
	}
	return errors.Join(errs...)
}

// killProcessTree SIGKILLs pid and its direct children (a shim and the
// container processes it started), children first so none is re-parented
// and missed.
func killProcessTree(pid int) error {
	procs, err := hostProcesses()
	if err != nil {
		return err
	}
	for _, p := range procs {
		if _, ppid, ok := procStat(p.pid); ok && ppid == pid {
			_ = syscall.Kill(p.pid, syscall.SIGKILL)
		}
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("killing %d: %w", pid, err)
	}
	return nil
}
