//go:build linux

package controlplane

import (
	"context"
	"fmt"
	"os"
	"strings"
)

// Leftovers lists what a stopped cluster left on the machine: processes
// started from its directory, mounts under it, the node's bridge and the
// kubelet's iptables chains. Empty is the promise of Stop; the node specs
// check it, because a leak here breaks the next run, not this one.
func (cp *ControlPlane) Leftovers() []string {
	var out []string
	procs, _ := hostProcesses()
	for _, p := range procs {
		if p.mentions(cp.Dir + "/") {
			out = append(out, "process "+p.String())
		}
	}
	if mounts, err := os.ReadFile("/proc/self/mountinfo"); err == nil {
		for _, line := range strings.Split(string(mounts), "\n") {
			if f := strings.Fields(line); len(f) > 4 && strings.HasPrefix(f[4], cp.Dir+"/") {
				out = append(out, "mount "+f[4])
			}
		}
	}
	if cp.node == nil {
		return out
	}
	ctx := context.Background()
	timeout := defaultStopBounds().command
	if _, err := runHost(ctx, timeout, "ip", "link", "show", bridgeName); err == nil {
		out = append(out, "bridge "+bridgeName)
	}
	for table, chains := range kubeletChains() {
		rules, err := runHost(ctx, timeout, "iptables", "-t", table, "-S")
		if err != nil {
			continue
		}
		for _, chain := range chains {
			if strings.Contains(rules, "-N "+chain+"\n") {
				out = append(out, fmt.Sprintf("iptables chain %s/%s", table, chain))
			}
		}
	}
	return out
}
