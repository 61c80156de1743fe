package framework

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"

	"github.com/confighash/confighash/e2e/controlplane"
)

// child is a server the specs run beside the cluster: in its own process
// group, so that a stop reaches whatever it started, killed with the test
// binary, its output appended to logPath.
type child struct {
	name    string
	logPath string
	cmd     *exec.Cmd
	exited  chan struct{}
}

// start runs bin with args and waits, up to a minute, until readyURL
// answers 200 OK.
func (c *child) start(ctx context.Context, readyURL, bin string, args ...string) error {
	if c.cmd != nil {
		return fmt.Errorf("%s already running", c.name)
	}
	logf, err := os.OpenFile(c.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("opening %s log: %w", c.name, err)
	}
	defer logf.Close()
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting %s: %w", c.name, err)
	}
	c.cmd, c.exited = cmd, make(chan struct{})
	go func() { _ = cmd.Wait(); close(c.exited) }()

	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	err = pollReady(ctx, readyURL, c.exited)
	switch {
	case errors.Is(err, errExited):
		c.cmd = nil
		text, _ := controlplane.TailFile(c.logPath, 30)
		return fmt.Errorf("%s %w; see %s:\n%s", c.name, err, c.logPath, text)
	case err != nil:
		return fmt.Errorf("%s not ready: %w; see %s", c.name, err, c.logPath)
	}
	return nil
}

// stop ends its process group, with grace for a clean exit unless ctx ends
// first, and returns once the process is gone.
func (c *child) stop(ctx context.Context, grace time.Duration) error {
	if c.cmd == nil {
		return nil
	}
	defer func() { c.cmd = nil }()
	if err := controlplane.StopGroup(ctx, controlplane.Group{PGID: c.cmd.Process.Pid, Gone: controlplane.Reaped(c.exited)}, grace); err != nil {
		return fmt.Errorf("stopping %s: %w", c.name, err)
	}
	return nil
}

// pid is the running process, or 0.
func (c *child) pid() int {
	if c.cmd == nil {
		return 0
	}
	return c.cmd.Process.Pid
}
