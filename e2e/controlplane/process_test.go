//go:build linux

package controlplane

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// childEnv makes the test binary act as a fake control-plane process, so the
// process handling is tested without the real (large, slow) binaries.
const childEnv = "CONTROLPLANE_TEST_CHILD"

func TestMain(m *testing.M) {
	switch os.Getenv(childEnv) {
	case "":
		os.Exit(m.Run())
	case "serve":
		fmt.Println("child started")
		fmt.Fprint(os.Stdout, "partial line without newline")
		blockForever()
	case "ignore-term":
		signal.Ignore(syscall.SIGTERM)
		fmt.Println("child ignoring SIGTERM")
		blockForever()
	case "escape":
		// A child in its own session, holding our output, as a containerd
		// shim does: a SIGKILL of our group does not reach it.
		grandchild := exec.Command(os.Args[0])
		grandchild.Env = append(os.Environ(), childEnv+"=serve")
		grandchild.Stdout, grandchild.Stderr = os.Stdout, os.Stderr
		grandchild.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		if err := grandchild.Start(); err != nil {
			panic(err)
		}
		fmt.Printf("grandchild %d\n", grandchild.Process.Pid)
		blockForever()
	case "crash":
		for i := range 50 {
			fmt.Printf("log line %d\n", i)
		}
		fmt.Fprintln(os.Stderr, "fatal: flag --bogus refused")
		os.Exit(3)
	}
}

// blockForever keeps a fake child running until it is signalled. Not
// `select {}`: without cgo (make test builds with CGO_ENABLED=0) the runtime
// sees a program whose only goroutine blocks on nothing as deadlocked, and
// exits; a sleeping timer is not a deadlock.
func blockForever() {
	for {
		time.Sleep(time.Hour)
	}
}

func childSpec(t *testing.T, dir, mode string, detached bool) processSpec {
	t.Helper()
	t.Setenv(childEnv, mode)
	// The dir argument lets ownedBy recognise the child, as it does the real
	// processes by their flags.
	return processSpec{name: "fake-" + mode, path: os.Args[0], args: []string{"--state=" + filepath.Join(dir, "x")}, dir: dir, detached: detached}
}

func gone(pid int) bool { return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) }

// waitLogged waits up to 10 s until the last lines of p's log contain text.
func waitLogged(t *testing.T, p *process, text string) {
	t.Helper()
	if err := waitReady(t.Context(), p, 10*time.Second, func(context.Context) error {
		if tail, _ := TailFile(p.logPath, 5); !strings.Contains(tail, text) {
			return fmt.Errorf("%q not logged yet", text)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

func TestProcessStopKillsAndReaps(t *testing.T) {
	dir := t.TempDir()
	p, err := startProcess(childSpec(t, dir, "serve", false))
	if err != nil {
		t.Fatal(err)
	}
	waitLogged(t, p, "child started")
	if gone(p.pid()) {
		t.Fatal("child not running")
	}
	if err := p.stop(); err != nil {
		t.Fatal(err)
	}
	if !gone(p.pid()) {
		t.Errorf("pid %d still exists after stop", p.pid())
	}
}

func TestProcessStopEscalatesToSIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for the 10 s SIGTERM grace period")
	}
	dir := t.TempDir()
	p, err := startProcess(childSpec(t, dir, "ignore-term", false))
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond) // let it install the handler
	begin := time.Now()
	if err := p.stop(); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(begin); took < stopGrace {
		t.Errorf("stop took %s; SIGTERM should have been ignored for %s", took, stopGrace)
	}
	if !gone(p.pid()) {
		t.Errorf("pid %d survived SIGKILL", p.pid())
	}
}

func TestWaitReadyQuotesLogOfCrashedProcess(t *testing.T) {
	dir := t.TempDir()
	p, err := startProcess(childSpec(t, dir, "crash", false))
	if err != nil {
		t.Fatal(err)
	}
	err = waitReady(t.Context(), p, 10*time.Second, func(context.Context) error { return errors.New("never ready") })
	if err == nil {
		t.Fatal("waitReady succeeded for a crashed process")
	}
	msg := err.Error()
	for _, want := range []string{"exited during startup", "exit status 3", "flag --bogus refused", "log line 49"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error lacks %q:\n%s", want, msg)
		}
	}
	if strings.Contains(msg, "log line 10\n") {
		t.Errorf("error quotes more than %d lines:\n%s", tailLines, msg)
	}
}

func TestLineWriterPrefixesAndFlushes(t *testing.T) {
	dir := t.TempDir()
	var out strings.Builder
	spec := childSpec(t, dir, "serve", false)
	spec.tee = &lineWriter{mu: new(sync.Mutex), w: &out, prefix: "[fake] "}
	p, err := startProcess(spec)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond)
	if err := p.stop(); err != nil {
		t.Fatal(err)
	}
	want := "[fake] child started\n[fake] partial line without newline\n"
	if got := out.String(); got != want {
		t.Errorf("tee got %q, want %q", got, want)
	}
	if text, _ := TailFile(p.logPath, 5); !strings.Contains(text, "child started") {
		t.Errorf("log file lacks output: %q", text)
	}
}

func TestStopDetached(t *testing.T) {
	dir := t.TempDir()
	var pids []int
	for range 2 {
		p, err := startProcess(childSpec(t, dir, "serve", true))
		if err != nil {
			t.Fatal(err)
		}
		pids = append(pids, p.pid())
	}
	// A dead PID in the file must be tolerated (a process that crashed).
	if err := writePIDFile(dir, append(pids, 999999999)); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	alive, err := DetachedPIDs(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(alive) != 2 {
		t.Fatalf("DetachedPIDs = %v, want %v", alive, pids)
	}
	if other, err := DetachedPIDs(t.TempDir()); err != nil || len(other) != 0 {
		t.Errorf("DetachedPIDs of an empty dir = %v, %v", other, err)
	}
	if err := StopDetached(t.Context(), dir, nil); err != nil {
		t.Fatal(err)
	}
	for _, pid := range pids {
		if ownedBy(pid, dir) {
			t.Errorf("pid %d still running", pid)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, pidFileName)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("pid file not removed: %v", err)
	}
	if err := StopDetached(t.Context(), dir, nil); err != nil {
		t.Errorf("second StopDetached: %v", err)
	}
}

func TestWaitReadyTimeoutAndCancel(t *testing.T) {
	dir := t.TempDir()
	p, err := startProcess(childSpec(t, dir, "serve", false))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := p.stop(); err != nil {
			t.Errorf("stopping: %v", err)
		}
	})
	never := func(context.Context) error { return errors.New("still booting") }

	err = waitReady(t.Context(), p, 300*time.Millisecond, never)
	if err == nil || !strings.Contains(err.Error(), "not ready after 300ms") || !strings.Contains(err.Error(), "still booting") || !strings.Contains(err.Error(), "child started") {
		t.Errorf("timeout error lacks the cause, last check or log tail: %v", err)
	}

	ctx, cancel := context.WithCancel(t.Context())
	time.AfterFunc(200*time.Millisecond, cancel)
	err = waitReady(ctx, p, time.Minute, never)
	if !errors.Is(err, context.Canceled) || strings.Contains(err.Error(), "child started") {
		t.Errorf("cancellation should be reported without the log tail: %v", err)
	}
}

// TestProcessStopWithEscapedGrandchild: a process whose output goes through
// a pipe (a tee) left a child in another session holding it. Stop must
// still see the process reaped instead of waiting on the pipe.
func TestProcessStopWithEscapedGrandchild(t *testing.T) {
	dir := t.TempDir()
	var out SyncBuffer
	spec := childSpec(t, dir, "escape", false)
	spec.tee = &lineWriter{mu: new(sync.Mutex), w: &out, prefix: ""}
	p, err := startProcess(spec)
	if err != nil {
		t.Fatal(err)
	}
	var grandchild int
	if err := waitReady(t.Context(), p, 10*time.Second, func(context.Context) error {
		text, _ := TailFile(p.logPath, 5)
		i := strings.Index(text, "grandchild ")
		if i < 0 {
			return errors.New("no grandchild yet")
		}
		if _, err := fmt.Sscanf(text[i:], "grandchild %d", &grandchild); err != nil {
			return errors.New("no grandchild yet")
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(grandchild, syscall.SIGKILL) })
	if err := p.stop(); err != nil {
		t.Errorf("stop = %v", err)
	}
}
