//go:build linux

package controlplane

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// fakeHostCommands puts scripts first on PATH for the commands that stop a
// node, so that no test touches the machine's real containerd, bridge or
// iptables (another cluster may be using them): ctr and iptables hang,
// and ip says the bridge does not exist. A hanging command ignores SIGTERM
// and leaves a child holding its output open, as a wedged ctr or an
// iptables stuck on a lock would; it records that child's PID in the file
// returned, one per line.
func fakeHostCommands(t *testing.T) (childPIDs string) {
	t.Helper()
	bin := t.TempDir()
	childPIDs = filepath.Join(bin, "children")
	hanging := "#!/bin/sh\ntrap '' TERM\nsleep 3600 &\necho $! >> " + childPIDs + "\nwait\n"
	for name, script := range map[string]string{
		"ctr":      hanging,
		"iptables": hanging,
		"ip":       "#!/bin/sh\nexit 1\n",
	} {
		if err := os.WriteFile(filepath.Join(bin, name), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	return childPIDs
}

// checkChildrenKilled: every child the hanging commands left is gone (or
// a zombie awaiting its reaper) shortly after.
func checkChildrenKilled(t *testing.T, childPIDs string) {
	t.Helper()
	data, err := os.ReadFile(childPIDs)
	if err != nil {
		t.Fatalf("no hanging command ran: %v", err)
	}
	for _, field := range strings.Fields(string(data)) {
		pid, err := strconv.Atoi(field)
		if err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(5 * time.Second)
		for alive(pid) && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if alive(pid) {
			t.Errorf("pid %d, left by a hanging command, was not killed with it", pid)
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// TestStopDetachedIsBounded is `cluster down` on a cluster in a bad state:
// its node's containerd never answers, iptables hangs, and a process
// ignores SIGTERM. Stopping must still end, within the sum of its bounds,
// with that process killed and the hangs reported.
func TestStopDetachedIsBounded(t *testing.T) {
	children := fakeHostCommands(t)
	dir := t.TempDir()
	p, err := startProcess(childSpec(t, dir, "ignore-term", true))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(-p.pid(), syscall.SIGKILL) })
	if err := writePIDFile(dir, []int{p.pid()}); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(newNodeFiles(dir).dir, 0o755); err != nil {
		t.Fatal(err)
	}
	waitLogged(t, p, "ignoring SIGTERM")

	b := stopBounds{grace: 200 * time.Millisecond, command: 300 * time.Millisecond, tasks: time.Second,
		drain: time.Second, host: time.Second, slow: 100 * time.Millisecond}
	// Everything overrunning: the tasks step, the process (grace, SIGKILL
	// wait) and the host step, each plus stepSlack.
	bound := b.tasks + b.process() + b.host + 3*stepSlack
	var progress SyncBuffer
	done := make(chan error, 1)
	go func() { done <- stopDetached(t.Context(), dir, &progress, b) }()
	select {
	case err = <-done:
	case <-time.After(bound + 10*time.Second):
		t.Fatalf("StopDetached still running after %s (its bounds add up to %s); progress:\n%s", bound+10*time.Second, bound, progress.String())
	}
	if ownedBy(p.pid(), dir) {
		t.Errorf("pid %d, which ignores SIGTERM, survived StopDetached", p.pid())
	}
	// iptables hung: the host step failed, so the pid file stays for a
	// second call; the ctr hang is reported but not an error (containerd
	// is often gone already).
	if err == nil || !strings.Contains(err.Error(), "iptables") {
		t.Errorf("StopDetached = %v, want the iptables hang reported", err)
	}
	if _, statErr := os.Stat(filepath.Join(dir, pidFileName)); statErr != nil {
		t.Errorf("pid file removed although clean-up failed: %v", statErr)
	}
	checkChildrenKilled(t, children)
	out := progress.String()
	for _, want := range []string{"killing the node's containers: ", "still at it after 100ms", "stopping "} {
		if !strings.Contains(out, want) {
			t.Errorf("progress lacks %q:\n%s", want, out)
		}
	}
}

// TestRunStopStepsLeavesAHungStepBehind: a step that ignores its context
// (a syscall that cannot be interrupted) is given up on stepSlack after
// its timeout, and the next step still runs.
func TestRunStopStepsLeavesAHungStepBehind(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	ran := false
	err := runStopSteps(t.Context(), nil, time.Hour, []stopStep{
		{name: "hung", timeout: 10 * time.Millisecond, run: func(context.Context) error { <-release; return nil }},
		{name: "next", timeout: time.Second, run: func(context.Context) error { ran = true; return nil }},
		{name: "optional", timeout: time.Second, optional: true, run: func(context.Context) error { return errors.New("containerd gone") }},
	})
	if err == nil || !strings.Contains(err.Error(), "hung: gave up after") || strings.Contains(err.Error(), "containerd gone") {
		t.Errorf("runStopSteps = %v, want only the hung step reported", err)
	}
	if !ran {
		t.Error("the step after a hung one did not run")
	}
}

// TestHostCommandKillsItsGroup: a command that ignores SIGTERM and leaves a
// child holding its output returns once its timeout passes, with that child
// killed too.
func TestHostCommandKillsItsGroup(t *testing.T) {
	children := fakeHostCommands(t)
	_, err := runHost(t.Context(), 200*time.Millisecond, "ctr", "tasks", "ls")
	if err == nil || !strings.Contains(err.Error(), "context deadline exceeded") {
		t.Errorf("runHost = %v, want a deadline error", err)
	}
	checkChildrenKilled(t, children)
}
