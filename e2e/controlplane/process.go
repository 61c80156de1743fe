package controlplane

import (
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
	// With a plain *os.File the child writes to the file itself, which is what
	// a detached process needs: a pipe to us would break when we exit.
	var out io.Writer = logFile
	if spec.tee != nil {
		out = io.MultiWriter(logFile, spec.tee)
	}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = sysProcAttr(spec.detached)

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
	pgid := p.pid() // Setpgid/Setsid make the child its own group leader
	if !p.exited() {
		if err := syscall.Kill(-pgid, syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
			return fmt.Errorf("sending SIGTERM to %s (pgid %d): %w", p.name, pgid, err)
		}
		select {
		case <-p.done:
		case <-time.After(stopGrace):
		}
	}
	// SIGKILL the group even if the leader exited on SIGTERM: it reaches any
	// child the leader left behind. ESRCH just means the group is empty.
	if err := syscall.Kill(-pgid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("sending SIGKILL to %s (pgid %d): %w", p.name, pgid, err)
	}
	select {
	case <-p.done:
		return nil
	case <-time.After(5 * time.Second):
		return fmt.Errorf("%s (pid %d) still not reaped 5s after SIGKILL", p.name, pgid)
	}
}

// tail returns the end of the process log, formatted for an error message.
func (p *process) tail() string {
	text, err := tailFile(p.logPath, tailLines)
	if err != nil {
		return fmt.Sprintf("(no log: %v)", err)
	}
	return fmt.Sprintf("--- last %d lines of %s ---\n%s\n--- end of %s log ---", tailLines, p.logPath, text, p.name)
}

// errWithTail is a startup failure of one process together with its log.
func (p *process) errWithTail(err error) error {
	return fmt.Errorf("%w\n%s", err, p.tail())
}
