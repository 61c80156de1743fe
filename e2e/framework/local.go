package framework

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/confighash/confighash/e2e/controlplane"
)

// buildConfighash builds the binary under test; the Go build cache makes
// repeat builds take a second or two.
func buildConfighash(ctx context.Context, root, out string) error {
	cmd := exec.CommandContext(ctx, "go", "build", "-o", out, "./cmd/confighash")
	cmd.Dir = root
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("building confighash: %w\n%s", err, b)
	}
	return nil
}

// localRunner runs the confighash binary out-of-cluster, registered by URL,
// as a child process that dies with the test binary.
type localRunner struct {
	bin, kubeconfig, logPath string
	webhookPort, healthPort  int
	cmd                      *exec.Cmd
	exited                   chan struct{}
}

func newLocalRunner(bin, kubeconfig, dir string) (*localRunner, error) {
	ports, err := controlplane.FreePorts(2)
	if err != nil {
		return nil, err
	}
	return &localRunner{bin: bin, kubeconfig: kubeconfig, logPath: filepath.Join(dir, "confighash.log"),
		webhookPort: ports[0], healthPort: ports[1]}, nil
}

func (r *localRunner) WebhookURL() string {
	return "https://127.0.0.1:" + strconv.Itoa(r.webhookPort) + "/mutate"
}

// LogPath is where the child's output goes.
func (r *localRunner) LogPath() string { return r.logPath }

func (r *localRunner) Start(ctx context.Context, extraArgs ...string) error {
	if r.cmd != nil {
		return errors.New("confighash already running")
	}
	logf, err := os.OpenFile(r.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("opening confighash log: %w", err)
	}
	defer logf.Close()
	args := append([]string{
		"--kubeconfig", r.kubeconfig,
		"--webhook-url", "https://127.0.0.1:" + strconv.Itoa(r.webhookPort),
		"--cert-dir", filepath.Join(filepath.Dir(r.logPath), "confighash-certs"),
		"--metrics-bind-address", "0",
		"--health-probe-bind-address", "127.0.0.1:" + strconv.Itoa(r.healthPort),
		"--namespace", Namespace,
		// A control plane without a node runs no pod, so no rollout of a
		// Deployment with replicas ever ends, and waves would wait for
		// them: specs here re-stamp every reader at once unless they turn
		// the waves on (--max-wave-size, with readers of 0 replicas or a
		// short progress deadline). The node's confighash (incluster)
		// runs with the shipped defaults, waves on.
		"--max-wave-size=0",
	}, extraArgs...)
	cmd := exec.Command(r.bin, args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting confighash: %w", err)
	}
	r.cmd, r.exited = cmd, make(chan struct{})
	go func() { _ = cmd.Wait(); close(r.exited) }()
	return r.waitReady(ctx)
}

func (r *localRunner) waitReady(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	err := pollReady(ctx, "http://127.0.0.1:"+strconv.Itoa(r.healthPort)+"/readyz", r.exited)
	switch {
	case errors.Is(err, errExited):
		r.cmd = nil
		return fmt.Errorf("confighash %w; see %s", err, r.logPath)
	case err != nil:
		return fmt.Errorf("confighash not ready: %w; see %s", err, r.logPath)
	}
	return nil
}

func (r *localRunner) Stop(ctx context.Context) error {
	if r.cmd == nil {
		return nil
	}
	defer func() { r.cmd = nil }()
	// An ended ctx cuts the 15 s grace short.
	if err := controlplane.StopGroup(ctx, controlplane.Group{PGID: r.cmd.Process.Pid, Gone: controlplane.Reaped(r.exited)}, 15*time.Second); err != nil {
		return fmt.Errorf("stopping confighash: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	// Make sure the port is free again before anyone restarts us.
	return waitPortClosed(r.webhookPort)
}

func waitPortClosed(port int) error {
	for range 50 {
		c, err := tls.Dial("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), &tls.Config{InsecureSkipVerify: true})
		if err != nil {
			return nil //nolint:nilerr // a refused dial is the closed port waited for
		}
		c.Close()
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("port %d still open after stopping confighash", port)
}

// PID is the running confighash process, or 0.
func (r *localRunner) PID() int {
	if r.cmd == nil {
		return 0
	}
	return r.cmd.Process.Pid
}
