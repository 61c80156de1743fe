//go:build linux

package controlplane

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"
)

// stopGrace is how long a process gets to exit after SIGTERM before SIGKILL.
// etcd and the API server normally need well under a second.
const stopGrace = 10 * time.Second

// process is one running control-plane binary. Its output always goes to a
// file under <Dir>/logs, so that a startup failure can quote it and a
// detached cluster can be debugged after the fact.
type process struct {
	name    string
	cmd     *exec.Cmd
	logPath string
	done    chan struct{} // closed once the process has been reaped
	waitErr error         // valid after done is closed
}

// processSpec says how to start one binary.
type processSpec struct {
	name     string
	path     string
	args     []string
	dir      string      // state directory: working dir and home of the logs
	env      []string    // added to this process's environment
	tee      *lineWriter // optional copy of the output (Options.LogWriter)
	detached bool
}

// startProcess starts the binary in its own process group, so that Stop can
// signal it together with anything it forks, and so that a Ctrl-C in the
// terminal (delivered to the foreground group) does not reach a detached
// cluster.
func startProcess(spec processSpec) (*process, error) {
	logDir := filepath.Join(spec.dir, "logs")
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		return nil, fmt.Errorf("creating log directory: %w", err)
	}
	logPath := filepath.Join(logDir, spec.name+".log")
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("opening log for %s: %w", spec.name, err)
	}

	cmd := exec.Command(spec.path, spec.args...)
	cmd.Dir = spec.dir
	if len(spec.env) > 0 {
		cmd.Env = append(os.Environ(), spec.env...)
	}
	// With a plain *os.File the child writes to the file itself, which is what
	// a detached process needs: a pipe to us would break when we exit.
	var out io.Writer = logFile
	if spec.tee != nil {
		out = io.MultiWriter(logFile, spec.tee)
	}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = sysProcAttr(spec.detached)
	// With a tee the output goes through a pipe, which anything the process
	// forked may hold open after it was killed: Wait, and so stop, would
	// wait for that forever.
	cmd.WaitDelay = commandWaitDelay

	if err := cmd.Start(); err != nil {
		logFile.Close()
		return nil, fmt.Errorf("starting %s (%s): %w", spec.name, spec.path, err)
	}
	p := &process{name: spec.name, cmd: cmd, logPath: logPath, done: make(chan struct{})}
	// Reap the child as soon as it exits, so a crash during startup is noticed
	// immediately and a stopped process does not linger as a zombie (which
	// would still answer kill(pid, 0)).
	go func() {
		p.waitErr = cmd.Wait()
		if spec.tee != nil {
			spec.tee.flush()
		}
		logFile.Close()
		close(p.done)
	}()
	return p, nil
}

// sysProcAttr puts a child in its own process group. Attached children also
// get Pdeathsig so they are killed if the test binary dies without calling
// Stop (a panic, a `go test -timeout`, SIGKILL). Pdeathsig fires when the OS
// thread that forked the child exits; the Go runtime does not retire threads
// unless a goroutine exits while locked to one, which this package never does.
// Detached children instead get a new session: no controlling terminal, no
// signals from the shell's job control, and they outlive us.
func sysProcAttr(detached bool) *syscall.SysProcAttr {
	if detached {
		return &syscall.SysProcAttr{Setsid: true}
	}
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

func (p *process) pid() int { return p.cmd.Process.Pid }

// exited reports whether the process has already terminated.
func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// stop sends SIGTERM to the process group, escalates to SIGKILL after
// stopGrace, and returns once the process has been reaped.
func (p *process) stop() error {
	// Setpgid/Setsid make the child its own group leader.
	if err := StopGroup(context.Background(), Group{PGID: p.pid(), Gone: Reaped(p.done)}, stopGrace); err != nil {
		return fmt.Errorf("stopping %s: %w", p.name, err)
	}
	return nil
}

// killGrace is how long a process group gets to go after SIGKILL.
const killGrace = 5 * time.Second

// Group is a process group to stop: its ID (its leader's PID) and how to
// tell that the leader is gone.
type Group struct {
	PGID int
	// Gone waits until the leader is gone, or ctx ends, and reports whether
	// it is gone. Called with an ended ctx it only looks.
	Gone func(ctx context.Context) bool
	// Owned, when set, is asked before each signal: a group whose leader
	// is no longer the process meant (exited, its PID perhaps reused) is
	// not signalled, and counts as stopped.
	Owned func() bool
}

// StopGroup is the harness's one terminate-then-kill: SIGTERM to the group,
// up to grace (less if ctx ends first) for the leader to go, then SIGKILL to
// the whole group even if the leader went, which reaches any child it left
// behind, and up to 5 s more. ESRCH (an empty group) is not an error.
func StopGroup(ctx context.Context, g Group, grace time.Duration) error {
	owned := func() bool { return g.Owned == nil || g.Owned() }
	for _, step := range []struct {
		sig   syscall.Signal
		grace time.Duration
		ctx   context.Context
	}{{syscall.SIGTERM, grace, ctx}, {syscall.SIGKILL, killGrace, context.Background()}} {
		if step.sig == syscall.SIGTERM && g.Gone(ended) {
			continue
		}
		if !owned() {
			return nil
		}
		if err := syscall.Kill(-g.PGID, step.sig); err != nil && !errors.Is(err, syscall.ESRCH) {
			return fmt.Errorf("sending %v to process group %d: %w", step.sig, g.PGID, err)
		}
		wctx, cancel := context.WithTimeout(step.ctx, step.grace)
		g.Gone(wctx)
		cancel()
	}
	if !g.Gone(ended) {
		return fmt.Errorf("process %d still there %v after SIGKILL", g.PGID, killGrace)
	}
	return nil
}

// ended is a context that has ended: Gone(ended) looks without waiting.
var ended = func() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}()

// Reaped is Group.Gone for a child this process waits for: done is closed
// once the child has been reaped.
func Reaped(done <-chan struct{}) func(context.Context) bool {
	return func(ctx context.Context) bool {
		select {
		case <-done:
			return true
		default:
		}
		select {
		case <-done:
			return true
		case <-ctx.Done():
			return false
		}
	}
}

// tail returns the end of the process log, formatted for an error message.
func (p *process) tail() string {
	text, err := TailFile(p.logPath, tailLines)
	if err != nil {
		return fmt.Sprintf("(no log: %v)", err)
	}
	return fmt.Sprintf("--- last %d lines of %s ---\n%s\n--- end of %s log ---", tailLines, p.logPath, text, p.name)
}

// errWithTail is a startup failure of one process together with its log.
func (p *process) errWithTail(err error) error {
	return fmt.Errorf("%w\n%s", err, p.tail())
}
