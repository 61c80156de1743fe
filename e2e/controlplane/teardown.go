//go:build linux

package controlplane

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// stopBounds limit every wait of stopping a cluster, so that Stop and
// StopDetached return in bounded time whatever state the cluster is in: a
// process that ignores SIGTERM or cannot be reaped, a wedged containerd, a
// host command stuck on a lock. Each step that overruns is left behind and
// reported; the next one still runs.
type stopBounds struct {
	grace   time.Duration // SIGTERM to SIGKILL, per process
	command time.Duration // one host command: ctr, iptables, ip, kube-proxy --cleanup
	tasks   time.Duration // killing every container the node's containerd runs
	drain   time.Duration // deleting the node's pods and waiting for them to go
	host    time.Duration // undoing the node's changes to the machine
	slow    time.Duration // a step that takes longer says so on the progress writer
}

func defaultStopBounds() stopBounds {
	return stopBounds{
		grace:   stopGrace,
		command: 20 * time.Second,
		tasks:   45 * time.Second,
		drain:   time.Minute,
		host:    time.Minute,
		slow:    5 * time.Second,
	}
}

// process is the bound of stopping one process: StopGroup's SIGTERM grace
// and SIGKILL wait, and a little for reading /proc.
func (b stopBounds) process() time.Duration { return b.grace + killGrace + 5*time.Second }

// stepSlack is how long a step gets, after its context ended, to return by
// itself before it is left behind.
const stepSlack = 2 * time.Second

// stopStep is one bounded part of stopping a cluster.
type stopStep struct {
	name    string
	timeout time.Duration
	run     func(ctx context.Context) error
	// optional steps report a failure on the progress writer only: killing
	// containerd's tasks fails whenever containerd is already gone.
	optional bool
}

// runStopSteps runs steps in order, each within its timeout. A step that
// has not returned stepSlack after its context ended (a syscall that does
// not heed it, a child that cannot be reaped) is left running and reported
// as an error. A slow step says so on progress (nil: io.Discard) while it
// runs, so that a long stop is never silent.
func runStopSteps(ctx context.Context, progress io.Writer, slow time.Duration, steps []stopStep) error {
	if progress == nil {
		progress = io.Discard
	}
	var errs []error
	for _, s := range steps {
		err := s.runBounded(ctx, progress, slow)
		switch {
		case err == nil:
		case s.optional:
			fmt.Fprintf(progress, "%s: %v (ignored)\n", s.name, err)
		default:
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func (s stopStep) runBounded(parent context.Context, progress io.Writer, slow time.Duration) error {
	ctx, cancel := context.WithTimeout(parent, s.timeout)
	defer cancel()
	done := make(chan error, 1) // buffered: a step left behind still ends
	go func() { done <- s.run(ctx) }()
	begin := time.Now()
	slowTimer := time.NewTimer(slow)
	defer slowTimer.Stop()
	var giveUp <-chan time.Time
	ended := ctx.Done()
	for {
		select {
		case err := <-done:
			if err != nil {
				return fmt.Errorf("%s: %w", s.name, err)
			}
			return nil
		case <-slowTimer.C:
			fmt.Fprintf(progress, "%s: still at it after %s (gives up after %s)\n", s.name, slow, s.timeout)
		case <-ended:
			ended = nil
			giveUp = time.After(stepSlack)
		case <-giveUp:
			err := fmt.Errorf("%s: gave up after %s, left behind: %w", s.name, time.Since(begin).Round(time.Millisecond), context.Cause(ctx))
			fmt.Fprintln(progress, err)
			return err
		}
	}
}

// commandWaitDelay is how long a host command's Wait waits, after the
// command was killed or exited, for output held open by what it left
// behind.
const commandWaitDelay = 2 * time.Second

// hostCommand is exec.CommandContext for the commands that stop a cluster
// and undo its changes: when ctx ends, the command's whole process group is
// killed (not just its leader), and Wait stops waiting for its output
// commandWaitDelay later, even if a grandchild still holds it.
func hostCommand(ctx context.Context, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = commandWaitDelay
	return cmd
}

// runHost runs a host command within timeout (and ctx) and returns its
// standard output. A failure quotes the end of its standard error.
func runHost(ctx context.Context, timeout time.Duration, name string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := hostCommand(ctx, name, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			err = fmt.Errorf("%w (%w)", err, context.Cause(ctx))
		}
		return stdout.String(), fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, lastLines(stderr.String(), 10))
	}
	return stdout.String(), nil
}
