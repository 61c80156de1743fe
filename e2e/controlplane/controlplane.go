//go:build linux

package controlplane

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// Startup budgets per process. They are generous because the first start on
// a loaded 2-core machine is slow (the API server bootstraps RBAC, priority
// levels and CRD-free discovery), and a too-short timeout only produces flaky
// failures; a wedged start still fails within a few minutes.
const (
	etcdStartTimeout              = 30 * time.Second
	apiserverStartTimeout         = 2 * time.Minute
	controllerManagerStartTimeout = 2 * time.Minute
)

// Options configures Start.
type Options struct {
	// Dir holds the state of the control plane: certificates, kubeconfig,
	// etcd data and process logs. If empty, a temporary directory is created
	// and removed again by Stop.
	Dir string
	// LogWriter, if set, additionally receives the processes' output, each
	// line prefixed with the process name. The logs are always also written
	// to files under Dir/logs, which startup errors quote.
	LogWriter io.Writer
	// Detached starts the processes in their own session so that they survive
	// the exit of the calling process (for `cluster up`), and records their
	// PIDs in Dir/pids for StopDetached. It cannot be combined with LogWriter,
	// which would need this process alive to copy the output.
	Detached bool
	// Node adds a real node: containerd, a kubelet, kube-scheduler and
	// kube-proxy, with pods on a host bridge. It needs root, installs
	// containerd, runc and the CNI plugins from Debian's packages when absent,
	// and allows one such cluster per machine (the bridge and its address are
	// fixed). The API server then listens on the bridge address instead of
	// loopback, so that pods reach it.
	Node bool
	// MaxPods is the node's kubelet maxPods; 0 keeps the kubelet's
	// default, 110. The pod network (a /24) holds at most 253 pods.
	MaxPods int
	// Progress, if set, receives progress lines of the node's slow first
	// steps (installing packages, building images), and of any step of
	// Stop that is slow or gives up.
	Progress io.Writer
	// WebhookClientCert makes the API server present a client certificate
	// (common name WebhookClientName, signed by the cluster CA, whose file
	// is ControlPlane.CACert) to every webhook it calls, through
	// --admission-control-config-file. A webhook that asks for no client
	// certificate gets none, so this changes nothing for the others.
	WebhookClientCert bool
}

// Phase is the duration of one step of Start, for spotting slow startups.
type Phase struct {
	Name     string
	Duration time.Duration
}

// ControlPlane is a running etcd, kube-apiserver and kube-controller-manager.
type ControlPlane struct {
	// Dir is the absolute state directory.
	Dir string
	// Kubeconfig is the path of the admin kubeconfig (system:masters).
	Kubeconfig string
	// Kubectl is the path of a kubectl binary matching the API server.
	Kubectl string
	// CACert is the path of the cluster CA's certificate, which also signs
	// the client certificate of Options.WebhookClientCert.
	CACert string

	restConfig *rest.Config
	client     kubernetes.Interface
	procs      []*process // in start order
	node       *nodeFiles // nil without a node
	phases     []Phase
	removeDir  bool // Dir was created by Start and is removed by Stop
	detached   bool
	progress   io.Writer // Options.Progress, or io.Discard

	stopOnce sync.Once
	stopErr  error
}

// Start runs a control plane and returns once the controller-manager works.
// ctx bounds only the startup: the processes keep running until Stop (or,
// when not detached, until this process dies). On failure everything that was
// started is stopped again, and the error quotes the failing process's log.
func Start(ctx context.Context, bins Binaries, opts Options) (*ControlPlane, error) {
	if err := bins.validate(opts.Node); err != nil {
		return nil, err
	}
	if opts.Detached && opts.LogWriter != nil {
		return nil, errors.New("controlplane: Options.LogWriter cannot be used with Detached")
	}
	cp := &ControlPlane{Kubectl: bins.Kubectl, detached: opts.Detached, progress: opts.progress()}
	if opts.Node {
		if err := EnsureNodePackages(ctx, opts.progress()); err != nil {
			return nil, err
		}
	}
	if err := cp.makeDir(opts.Dir); err != nil {
		return nil, err
	}
	if err := cp.start(ctx, bins, opts); err != nil {
		if stopErr := cp.Stop(); stopErr != nil {
			err = fmt.Errorf("%w (and cleaning up: %w)", err, stopErr)
		}
		return nil, err
	}
	return cp, nil
}

func (cp *ControlPlane) makeDir(dir string) error {
	if dir == "" {
		tmp, err := os.MkdirTemp("", "confighash-controlplane-")
		if err != nil {
			return fmt.Errorf("creating state directory: %w", err)
		}
		cp.Dir, cp.removeDir = tmp, true
		return nil
	}
	// Absolute, because the processes run with Dir as their working
	// directory and StopDetached recognises them by Dir in their arguments.
	abs, err := filepath.Abs(dir)
	if err != nil {
		return fmt.Errorf("resolving state directory %s: %w", dir, err)
	}
	if err := os.MkdirAll(abs, 0o700); err != nil {
		return fmt.Errorf("creating state directory: %w", err)
	}
	cp.Dir = abs
	return nil
}

func (cp *ControlPlane) start(ctx context.Context, bins Binaries, opts Options) error {
	begin := time.Now()
	ports, err := FreePorts(9)
	if err != nil {
		return err
	}
	etcdClientPort, etcdPeerPort, apiserverPort, controllerManagerPort := ports[0], ports[1], ports[2], ports[3]
	apiserverIP := "127.0.0.1"
	if opts.Node {
		// Before the API server: it binds to the bridge's address.
		if err := ensureBridge(); err != nil {
			return err
		}
		files := newNodeFiles(cp.Dir)
		cp.node = &files
		apiserverIP = nodeIP
	}

	keys, err := newPKI()
	if err != nil {
		return err
	}
	files, err := keys.write(cp.Dir)
	if err != nil {
		return err
	}
	cp.CACert = files.CACert
	host := fmt.Sprintf("https://%s:%d", apiserverIP, apiserverPort)
	kubeconfig, err := adminKubeconfig(host, keys)
	if err != nil {
		return err
	}
	cp.Kubeconfig = filepath.Join(cp.Dir, "kubeconfig")
	if err := writeKubeconfig(cp.Kubeconfig, kubeconfig); err != nil {
		return err
	}
	cp.restConfig = adminRESTConfig(host, keys)
	client, err := kubernetes.NewForConfig(cp.RESTConfig())
	if err != nil {
		return fmt.Errorf("creating admin client: %w", err)
	}
	cp.client = client
	cp.phase("certificates and kubeconfig", begin)

	var tee func(name string) *lineWriter
	if opts.LogWriter != nil {
		mu := new(sync.Mutex)
		tee = func(name string) *lineWriter {
			return &lineWriter{mu: mu, w: opts.LogWriter, prefix: "[" + name + "] "}
		}
	}
	apiserverFlags := apiserverArgs(cp.Dir, etcdClientPort, apiserverPort, files)
	if opts.Node {
		apiserverFlags = append(apiserverFlags, nodeAPIServerArgs(files)...)
	}
	if opts.WebhookClientCert {
		admission, err := writeAdmissionConfig(filepath.Join(cp.Dir, "pki"), files)
		if err != nil {
			return err
		}
		apiserverFlags = append(apiserverFlags, "--admission-control-config-file="+admission.Config)
	}
	steps := []step{
		{name: "etcd", path: bins.Etcd, args: etcdArgs(cp.Dir, etcdClientPort, etcdPeerPort), timeout: etcdStartTimeout, ready: etcdHealthy(etcdClientPort)},
		{name: "kube-apiserver", path: bins.APIServer, args: apiserverFlags, timeout: apiserverStartTimeout, ready: apiserverReady(client)},
		{name: "kube-controller-manager", path: bins.ControllerManager, args: controllerManagerArgs(cp.Dir, controllerManagerPort, cp.Kubeconfig, files), timeout: controllerManagerStartTimeout, ready: controllerManagerWorking(client)},
	}
	if opts.Node {
		steps = append(steps, cp.nodeSteps(ctx, bins, files, ports[4:], opts)...)
	}
	for _, step := range steps {
		begin := time.Now()
		if step.before != nil {
			if err := step.before(); err != nil {
				return err
			}
		}
		spec := processSpec{name: step.name, path: step.path, args: step.args, dir: cp.Dir, detached: opts.Detached}
		if tee != nil {
			spec.tee = tee(step.name)
		}
		p, err := startProcess(spec)
		if err != nil {
			return err
		}
		cp.procs = append(cp.procs, p)
		if opts.Detached {
			// Recorded before waiting, so that `down` can clean up even if
			// `up` itself is killed half-way through startup.
			if err := writePIDFile(cp.Dir, cp.PIDs()); err != nil {
				return err
			}
		}
		if err := waitReady(ctx, p, step.timeout, step.ready); err != nil {
			return err
		}
		cp.phase(step.name, begin)
	}
	return nil
}

// step is one process of Start: what to prepare, how to run it and how to
// tell that it works.
type step struct {
	name    string
	before  func() error // optional: files or images the process needs
	path    string
	args    []string
	timeout time.Duration
	ready   func(context.Context) error
}

func (o Options) progress() io.Writer {
	if o.Progress != nil {
		return o.Progress
	}
	return io.Discard
}

func (cp *ControlPlane) phase(name string, begin time.Time) {
	cp.phases = append(cp.phases, Phase{Name: name, Duration: time.Since(begin)})
}

// RESTConfig returns a new copy of the admin client configuration, so
// callers may change it (QPS, user agent, impersonation) freely.
func (cp *ControlPlane) RESTConfig() *rest.Config {
	return rest.CopyConfig(cp.restConfig)
}

// PIDs returns the process IDs of etcd, kube-apiserver and
// kube-controller-manager, in start order (as far as they were started).
func (cp *ControlPlane) PIDs() []int {
	pids := make([]int, 0, len(cp.procs))
	for _, p := range cp.procs {
		pids = append(pids, p.pid())
	}
	return pids
}

// StartupPhases reports how long each step of Start took.
func (cp *ControlPlane) StartupPhases() []Phase {
	return append([]Phase(nil), cp.phases...)
}

// Stop terminates the processes in reverse start order (so the
// controller-manager never sees the API server vanish first, and the API
// server never loses etcd), each with SIGTERM then, after 10 s, SIGKILL to its
// process group. A node is drained first and its changes to the machine
// (mounts, iptables rules, the bridge) undone last. Every step is bounded
// (see stopBounds), so Stop returns in bounded time whatever state the
// cluster is in. It is idempotent and safe to defer alongside an explicit
// call. A temporary Dir created by Start is removed; a caller-provided one
// is kept.
func (cp *ControlPlane) Stop() error {
	cp.stopOnce.Do(func() {
		b := defaultStopBounds()
		var steps []stopStep
		if cp.node != nil {
			steps = append(steps, stopStep{name: "draining the node", timeout: b.drain + b.tasks + 2*b.process(),
				run: func(ctx context.Context) error { return cp.drainNode(ctx, b) }})
		}
		for i := len(cp.procs) - 1; i >= 0; i-- {
			p := cp.procs[i]
			steps = append(steps, stopStep{name: fmt.Sprintf("stopping %s (pid %d)", p.name, p.pid()), timeout: b.process(),
				run: func(context.Context) error { return p.stop() }})
		}
		if cp.node != nil {
			steps = append(steps, stopStep{name: "undoing the node's changes to the machine", timeout: b.host,
				run: func(ctx context.Context) error { return cleanupNodeHost(ctx, *cp.node, b.command) }})
		}
		err := runStopSteps(context.Background(), cp.progress, b.slow, steps)
		// Keep the pid file and the directory when something survived:
		// they are what `down` and a human need to find it.
		if err == nil && cp.detached {
			err = removePIDFile(cp.Dir)
		}
		if err == nil && cp.removeDir {
			if rmErr := os.RemoveAll(cp.Dir); rmErr != nil {
				err = fmt.Errorf("removing state directory: %w", rmErr)
			}
		}
		cp.stopErr = err
	})
	return cp.stopErr
}
