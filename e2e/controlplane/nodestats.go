//go:build linux

package controlplane

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// ContainerRSS returns the resident memory of a container on the node, in
// bytes, read from its memory cgroup: v1's total_rss, or v2's anon. The
// kubelet's /stats/summary would be the usual source, but on this kind of
// machine its cAdvisor cannot stat the root file system's device and the
// whole summary fails, so the figure comes from the cgroup the kubelet put
// the container in. containerID is a pod status's containerID
// ("containerd://<id>").
func (cp *ControlPlane) ContainerRSS(ctx context.Context, containerID string) (uint64, error) {
	if cp.node == nil {
		return 0, errors.New("controlplane: ContainerRSS needs a cluster started with Options.Node")
	}
	id := strings.TrimPrefix(containerID, "containerd://")
	out, err := ctr(ctx, *cp.node, "tasks", "ls")
	if err != nil {
		return 0, err
	}
	pid := 0
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) >= 2 && f[0] == id {
			pid, _ = strconv.Atoi(f[1])
		}
	}
	if pid == 0 {
		return 0, fmt.Errorf("no running task for container %s", id)
	}
	dir, field, err := memoryCgroup(pid)
	if err != nil {
		return 0, err
	}
	return statField(filepath.Join(dir, "memory.stat"), field)
}

// memoryCgroup finds the memory cgroup directory of pid, and the memory.stat
// field that counts its resident anonymous memory.
func memoryCgroup(pid int) (dir, field string, err error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid))
	if err != nil {
		return "", "", fmt.Errorf("reading cgroups of %d: %w", pid, err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		for _, c := range strings.Split(parts[1], ",") {
			if c == "memory" {
				return filepath.Join("/sys/fs/cgroup/memory", parts[2]), "total_rss", nil
			}
		}
		if parts[0] == "0" && parts[1] == "" {
			dir = filepath.Join("/sys/fs/cgroup", parts[2]) // v2, unless a v1 memory line follows
		}
	}
	if dir != "" {
		return dir, "anon", nil
	}
	return "", "", fmt.Errorf("no memory cgroup for %d", pid)
}

func statField(file, field string) (uint64, error) {
	f, err := os.Open(file)
	if err != nil {
		return 0, fmt.Errorf("reading %s: %w", file, err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		name, value, ok := strings.Cut(sc.Text(), " ")
		if ok && name == field {
			return strconv.ParseUint(value, 10, 64)
		}
	}
	return 0, fmt.Errorf("%s has no %s", file, field)
}
