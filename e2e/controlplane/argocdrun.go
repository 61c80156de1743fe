//go:build linux

package controlplane

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// argocdStartTimeout covers a component's start until it serves /healthz.
const argocdStartTimeout = 2 * time.Minute

// ArgoCDOptions says where and how StartArgoCD runs Argo CD.
type ArgoCDOptions struct {
	// Kubeconfig and Kubectl name the cluster and the kubectl to apply with.
	Kubeconfig, Kubectl string
	// Dir is the working directory: logs in Dir/logs (argocd-*.log,
	// redis.log), the repo-server's data directories and clones. It must
	// exist; the caller removes it.
	Dir string
	// ControllerEnv is added to the application controller's environment:
	// the ARGOCD_APPLICATION_CONTROLLER_* variables Argo CD's install sets
	// from argocd-cmd-params-cm.
	ControllerEnv []string
}

// ArgoCDRun is a running Argo CD: redis, the repo-server and the
// application controller, out of cluster, against one cluster.
type ArgoCDRun struct {
	// Server is the URL of the registered cluster: an Application's
	// destination.server.
	Server string

	opts                                   ArgoCDOptions
	bin                                    string
	redisPort, repoPort, repoMetrics, ctrl int
	redis, repo, controller                *process
	stopOnce                               sync.Once
	stopErr                                error
}

// StartArgoCD installs Argo CD's CRDs and settings objects into the
// cluster (see argocdObjects) and starts redis (EnsureRedis first), the
// repo-server and the application controller with their default flags,
// returning once each serves /healthz. Like the control plane's processes,
// they are killed if this process dies without calling Stop; call Stop
// before stopping the cluster.
func StartArgoCD(ctx context.Context, a ArgoCD, opts ArgoCDOptions, progress io.Writer) (*ArgoCDRun, error) {
	if err := isExecutable(a.Binary); err != nil {
		return nil, fmt.Errorf("ArgoCD.Binary: %w", err)
	}
	if err := EnsureRedis(ctx, progress); err != nil {
		return nil, err
	}
	server, err := installArgoCD(ctx, a, opts.Kubectl, opts.Kubeconfig)
	if err != nil {
		return nil, err
	}
	// The repo-server is the same binary under its own name.
	link := filepath.Join(opts.Dir, argocdRepoServerName)
	if err := os.Symlink(a.Binary, link); err != nil && !errors.Is(err, os.ErrExist) {
		return nil, fmt.Errorf("linking %s: %w", argocdRepoServerName, err)
	}
	ports, err := FreePorts(4)
	if err != nil {
		return nil, err
	}
	r := &ArgoCDRun{Server: server, opts: opts, bin: a.Binary,
		redisPort: ports[0], repoPort: ports[1], repoMetrics: ports[2], ctrl: ports[3]}
	if r.redis, err = startRedis(ctx, r.redisPort, opts.Dir); err != nil {
		return nil, err
	}
	if r.repo, err = r.startRepoServer(ctx, link); err != nil {
		return nil, errors.Join(err, r.Stop())
	}
	if err := r.StartController(ctx, opts.ControllerEnv...); err != nil {
		return nil, errors.Join(err, r.Stop())
	}
	return r, nil
}

// startRepoServer runs the repo-server with TLS on (it makes its own
// certificate; --disable-tls conflicts with the default --client-ca-path),
// GPG off and writable data directories: without them it stops at start
// (`stat /app/config/gpg/keys`). Its PATH starts with a directory holding a
// stand-in for git-verify-wrapper.sh, which Argo CD's image ships and
// v3.6 runs on every manifest generation; with GPG off it has nothing to
// verify, and without it generation fails with a bare "permission denied"
// (which Redis then caches for the revision).
func (r *ArgoCDRun) startRepoServer(ctx context.Context, path string) (*process, error) {
	dir := r.opts.Dir
	var env []string
	for _, d := range []struct{ name, env string }{
		{"tls", "ARGOCD_TLS_DATA_PATH"}, {"ssh", "ARGOCD_SSH_DATA_PATH"},
		{"gpg-keys", "ARGOCD_GPG_DATA_PATH"}, {"gnupg", "ARGOCD_GNUPGHOME"},
		{"tmp", "TMPDIR"}, {"tools", ""},
	} {
		p := filepath.Join(dir, "repo-server", d.name)
		if err := os.MkdirAll(p, 0o700); err != nil {
			return nil, fmt.Errorf("creating %s: %w", p, err)
		}
		if d.env != "" {
			env = append(env, d.env+"="+p)
		}
	}
	tools := filepath.Join(dir, "repo-server", "tools")
	if err := os.WriteFile(filepath.Join(tools, "git-verify-wrapper.sh"), []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
		return nil, fmt.Errorf("writing the git-verify-wrapper.sh stand-in: %w", err)
	}
	env = append(env, "ARGOCD_GPG_ENABLED=false", "PATH="+tools+string(os.PathListSeparator)+os.Getenv("PATH"))
	p, err := startProcess(processSpec{
		name: "argocd-repo-server",
		path: path,
		args: []string{
			"--redis", "127.0.0.1:" + strconv.Itoa(r.redisPort),
			"--address", "127.0.0.1", "--port", strconv.Itoa(r.repoPort),
			"--metrics-address", "127.0.0.1", "--metrics-port", strconv.Itoa(r.repoMetrics),
		},
		dir: dir,
		env: env,
	})
	if err != nil {
		return nil, err
	}
	if err := waitReady(ctx, p, argocdStartTimeout, httpHealthy(r.repoMetrics)); err != nil {
		return nil, joinProcessStop(err, p)
	}
	return p, nil
}

// StartController starts the application controller, with env added to its
// environment, once the previous one (if any) is stopped: a second
// controller on the same metrics port would stop at once.
func (r *ArgoCDRun) StartController(ctx context.Context, env ...string) error {
	if r.controller != nil && !r.controller.exited() {
		return errors.New("the application controller is running; StopController first")
	}
	p, err := startProcess(processSpec{
		name: "argocd-application-controller",
		path: r.bin,
		args: []string{
			"--kubeconfig", r.opts.Kubeconfig,
			"--namespace", ArgoCDNamespace,
			"--redis", "127.0.0.1:" + strconv.Itoa(r.redisPort),
			"--repo-server", "127.0.0.1:" + strconv.Itoa(r.repoPort),
			"--metrics-port", strconv.Itoa(r.ctrl),
		},
		dir: r.opts.Dir,
		env: env,
	})
	if err != nil {
		return err
	}
	if err := waitReady(ctx, p, argocdStartTimeout, httpHealthy(r.ctrl)); err != nil {
		return joinProcessStop(err, p)
	}
	r.controller = p
	return nil
}

// StopController stops the application controller; redis and the
// repo-server go on.
func (r *ArgoCDRun) StopController() error {
	if r.controller == nil {
		return nil
	}
	p := r.controller
	r.controller = nil
	return p.stop()
}

// Logs names the log files, for a failed spec to quote.
func (r *ArgoCDRun) Logs() []string {
	var logs []string
	for _, p := range []*process{r.controller, r.repo, r.redis} {
		if p != nil {
			logs = append(logs, p.logPath)
		}
	}
	return logs
}

// Stop stops the controller, the repo-server and redis, in that order.
func (r *ArgoCDRun) Stop() error {
	r.stopOnce.Do(func() {
		var errs []error
		errs = append(errs, r.StopController())
		for _, p := range []*process{r.repo, r.redis} {
			if p != nil {
				errs = append(errs, p.stop())
			}
		}
		r.stopErr = errors.Join(errs...)
	})
	return r.stopErr
}

// String is for log lines: where the components listen.
func (r *ArgoCDRun) String() string {
	return strings.Join([]string{
		"redis 127.0.0.1:" + strconv.Itoa(r.redisPort),
		"repo-server 127.0.0.1:" + strconv.Itoa(r.repoPort),
		"controller metrics 127.0.0.1:" + strconv.Itoa(r.ctrl),
	}, ", ")
}
