package framework

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"os/exec"
	"path/filepath"
	"strconv"
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
	bin, kubeconfig         string
	webhookPort, healthPort int
	proc                    child
}

func newLocalRunner(bin, kubeconfig, dir string) (*localRunner, error) {
	ports, err := controlplane.FreePorts(2)
	if err != nil {
		return nil, err
	}
	return &localRunner{bin: bin, kubeconfig: kubeconfig, webhookPort: ports[0], healthPort: ports[1],
		proc: child{name: "confighash", logPath: filepath.Join(dir, "confighash.log")}}, nil
}

func (r *localRunner) WebhookURL() string {
	return "https://127.0.0.1:" + strconv.Itoa(r.webhookPort) + "/mutate"
}

// LogPath is where the child's output goes.
func (r *localRunner) LogPath() string { return r.proc.logPath }

func (r *localRunner) Start(ctx context.Context, extraArgs ...string) error {
	args := append([]string{
		"--kubeconfig", r.kubeconfig,
		"--webhook-url", "https://127.0.0.1:" + strconv.Itoa(r.webhookPort),
		"--cert-dir", filepath.Join(filepath.Dir(r.proc.logPath), "confighash-certs"),
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
	return r.proc.start(ctx, "http://127.0.0.1:"+strconv.Itoa(r.healthPort)+"/readyz", r.bin, args...)
}

func (r *localRunner) Stop(ctx context.Context) error {
	if r.proc.cmd == nil {
		return nil
	}
	// An ended ctx cuts the 15 s grace short.
	if err := r.proc.stop(ctx, 15*time.Second); err != nil {
		return err
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
func (r *localRunner) PID() int { return r.proc.pid() }
