//go:build linux

package controlplane

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// pidFileName is where a detached control plane records its processes, one
// PID per line in start order, for a later StopDetached from another process.
const pidFileName = "pids"

func writePIDFile(dir string, pids []int) error {
	var b strings.Builder
	for _, pid := range pids {
		fmt.Fprintln(&b, pid)
	}
	path := filepath.Join(dir, pidFileName)
	// Write-then-rename: a reader never sees a half-written list.
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(b.String()), 0o644); err != nil {
		return fmt.Errorf("writing %s: %w", tmp, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("renaming %s: %w", tmp, err)
	}
	return nil
}

func readPIDFile(dir string) ([]int, error) {
	path := filepath.Join(dir, pidFileName)
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	var pids []int
	for _, field := range strings.Fields(string(data)) {
		pid, err := strconv.Atoi(field)
		if err != nil || pid <= 1 {
			return nil, fmt.Errorf("%s: invalid pid %q", path, field)
		}
		pids = append(pids, pid)
	}
	return pids, nil
}

func removePIDFile(dir string) error {
	if err := os.Remove(filepath.Join(dir, pidFileName)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("removing pid file: %w", err)
	}
	return nil
}

// DetachedPIDs returns the PIDs recorded in dir/pids that still belong to a
// live control-plane process of that directory. No pid file means none.
func DetachedPIDs(dir string) ([]int, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("resolving %s: %w", dir, err)
	}
	pids, err := readPIDFile(abs)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var alive []int
	for _, pid := range pids {
		if ownedBy(pid, abs) {
			alive = append(alive, pid)
		}
	}
	return alive, nil
}

// StopDetached stops a control plane that Start ran with Detached in dir,
// possibly from another process: SIGTERM to each recorded process group in
// reverse start order, SIGKILL after 10 s, then it removes the pid file.
// Having nothing to stop is not an error, so `down` is idempotent.
//
// Every step is bounded (see stopBounds), so it returns in bounded time
// (about 4 minutes if every step overruns, seconds normally) whatever state
// the cluster is in; a slow step says so on progress (nil: quiet). When ctx
// ends (Ctrl-C), the SIGTERM graces are cut short and the processes killed
// at once; host clean-up that did not run fails, and the pid file stays for
// a second call.
func StopDetached(ctx context.Context, dir string, progress io.Writer) error {
	return stopDetached(ctx, dir, progress, defaultStopBounds())
}

func stopDetached(ctx context.Context, dir string, progress io.Writer, b stopBounds) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return fmt.Errorf("resolving %s: %w", dir, err)
	}
	pids, err := readPIDFile(abs)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	var steps []stopStep
	node := newNodeFiles(abs)
	_, statErr := os.Stat(node.dir)
	hasNode := statErr == nil
	if hasNode {
		// While containerd still runs: kill what it runs, since a killed
		// kubelet leaves its pods behind. containerd may be gone already.
		steps = append(steps, stopStep{name: "killing the node's containers", timeout: b.tasks, optional: true,
			run: func(ctx context.Context) error { return killTasks(ctx, node, b.command) }})
	}
	for i := len(pids) - 1; i >= 0; i-- {
		pid := pids[i]
		steps = append(steps, stopStep{name: fmt.Sprintf("stopping %s (pid %d)", commandName(pid), pid), timeout: b.process(),
			run: func(ctx context.Context) error { return stopForeign(ctx, pid, abs, b.grace) }})
	}
	if hasNode {
		steps = append(steps, stopStep{name: "undoing the node's changes to the machine", timeout: b.host,
			run: func(ctx context.Context) error { return cleanupNodeHost(ctx, node, b.command) }})
	}
	if err := runStopSteps(ctx, progress, b.slow, steps); err != nil {
		return err
	}
	return removePIDFile(abs)
}

// commandName is the base name of pid's executable, for progress lines.
func commandName(pid int) string {
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil || len(cmdline) == 0 {
		return "process"
	}
	argv0, _, _ := bytes.Cut(cmdline, []byte{0})
	return filepath.Base(string(argv0))
}

// stopForeign stops a process group we did not start in this process, so we
// cannot wait(2) for it and poll instead. A PID that no longer belongs to this
// cluster (exited, possibly reused by something else) is left alone. ctx
// cuts the SIGTERM grace short; the SIGKILL is sent regardless.
func stopForeign(ctx context.Context, pid int, dir string, grace time.Duration) error {
	owned := func() bool { return ownedBy(pid, dir) }
	gone := func(ctx context.Context) bool {
		for owned() {
			select {
			case <-ctx.Done():
				return false
			case <-time.After(pollInterval):
			}
		}
		return true
	}
	return StopGroup(ctx, Group{PGID: pid, Gone: gone, Owned: owned}, grace)
}

// ownedBy reports whether pid is a live (not zombie) process whose command
// line mentions dir. Every control-plane process has dir in its flags, so this
// guards against signalling an unrelated process that reused a stale PID.
func ownedBy(pid int, dir string) bool {
	if !alive(pid) {
		return false
	}
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		return false
	}
	for _, arg := range bytes.Split(cmdline, []byte{0}) {
		if strings.Contains(string(arg), dir+string(filepath.Separator)) {
			return true
		}
	}
	return false
}
