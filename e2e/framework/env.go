package framework

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/confighash/confighash/e2e/controlplane"
)

// KubeconfigEnv names an existing cluster with confighash installed; when
// unset, a local control plane is started.
const KubeconfigEnv = "CONFIGHASH_E2E_KUBECONFIG"

// KubernetesEnv names the Kubernetes release of the local control plane, one
// of controlplane.KubernetesVersions; unset, controlplane.KubernetesVersion.
// The e2e package's TestMain reads it into Options.
const KubernetesEnv = "CONFIGHASH_E2E_KUBERNETES"

// Namespace is where confighash runs and keeps its Secrets.
const Namespace = "confighash-system"

// Env is a cluster with confighash on it.
type Env struct {
	Kubeconfig string
	// KubectlPath is the kubectl binary; Run and Kubectl run it.
	KubectlPath string
	Config      *rest.Config
	Client      client.Client
	// KubernetesVersion is the release asked for (Options): the API server
	// must report it. Empty against a cluster for which none was asked.
	KubernetesVersion string
	// SpecTimeout bounds each spec's calls (SpecContext).
	SpecTimeout time.Duration
	// Confighash starts and stops confighash itself.
	Confighash Runner
	// WebhookClientCA, when set, is the CA file of the client certificate
	// the API server presents to webhooks, whose common name is
	// WebhookClientName: pass both to confighash's --webhook-client-ca-file
	// and --webhook-client-names. Empty on a cluster whose API server was
	// not set up so (CONFIGHASH_E2E_KUBECONFIG).
	WebhookClientCA   string
	WebhookClientName string

	stop func() error
	// another makes a further local confighash; nil against a cluster.
	another func(name string) (*localRunner, error)
}

// Runner controls the confighash under test.
type Runner interface {
	// Start runs confighash with extra flags and returns once it is ready.
	Start(ctx context.Context, extraArgs ...string) error
	// Stop stops it and returns once it is gone.
	Stop(ctx context.Context) error
	// WebhookURL is the admission endpoint, for calling it directly.
	WebhookURL() string
}

// Options shape Setup's local control plane.
type Options struct {
	// KubernetesVersion is its release, one of
	// controlplane.KubernetesVersions; empty for
	// controlplane.KubernetesVersion.
	KubernetesVersion string
}

// Setup is SetupWith the default Options.
func Setup(ctx context.Context, progress io.Writer) (*Env, error) {
	return SetupWith(ctx, progress, Options{})
}

// SetupWith prepares an Env from the environment and o. progress receives
// build and start-up messages.
func SetupWith(ctx context.Context, progress io.Writer, o Options) (*Env, error) {
	if kc := os.Getenv(KubeconfigEnv); kc != "" {
		return external(ctx, kc, o.KubernetesVersion)
	}
	version := o.KubernetesVersion
	if version == "" {
		version = controlplane.KubernetesVersion
	}
	root, err := controlplane.RepoRoot()
	if err != nil {
		return nil, err
	}
	bins, err := controlplane.EnsureKubernetes(ctx, root, version, progress)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(progress, "starting local control plane (etcd %s, kube-apiserver %s)…\n", controlplane.EtcdVersion, version)
	// The certificate goes only to webhooks that ask for one: confighash
	// does only when a spec passes it --webhook-client-ca-file.
	cp, err := controlplane.Start(ctx, bins, controlplane.Options{WebhookClientCert: true})
	if err != nil {
		return nil, err
	}
	env, err := newEnv(cp.Kubeconfig, cp.Kubectl, cp.RESTConfig())
	if err != nil {
		return nil, joinStop(err, cp.Stop)
	}
	env.WebhookClientCA, env.WebhookClientName = cp.CACert, controlplane.WebhookClientName
	env.KubernetesVersion = version
	// In the run's own directory, not bin/: worktrees may share bin/ (a
	// symlink to one build of the control plane), and two runs building into
	// it would test each other's confighash.
	bin := filepath.Join(cp.Dir, "confighash")
	if err := buildConfighash(ctx, root, bin); err != nil {
		return nil, joinStop(err, cp.Stop)
	}
	local, err := newLocalRunner(bin, cp.Kubeconfig, cp.Dir)
	if err != nil {
		return nil, joinStop(err, cp.Stop)
	}
	env.Confighash = local
	env.another = func(name string) (*localRunner, error) {
		dir := filepath.Join(cp.Dir, name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("creating %s: %w", dir, err)
		}
		return newLocalRunner(bin, cp.Kubeconfig, dir)
	}
	env.stop = func() error {
		stopErr := local.Stop(context.Background())
		if err := cp.Stop(); err != nil {
			return err
		}
		return stopErr
	}
	return env, nil
}

func external(ctx context.Context, kubeconfig, version string) (*Env, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("loading %s=%s: %w", KubeconfigEnv, kubeconfig, err)
	}
	env, err := newEnv(kubeconfig, "kubectl", cfg)
	if err != nil {
		return nil, err
	}
	env.Confighash = &inClusterRunner{c: env.Client}
	env.KubernetesVersion = version
	env.stop = func() error { return nil }
	return env, env.Confighash.Start(ctx)
}

func newEnv(kubeconfig, kubectl string, cfg *rest.Config) (*Env, error) {
	// The specs' clients log nothing worth reading; left unset,
	// controller-runtime prints a stack trace into every lane's output.
	ctrllog.SetLogger(logr.Discard())
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return nil, fmt.Errorf("building scheme: %w", err)
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return nil, fmt.Errorf("creating client: %w", err)
	}
	return &Env{Kubeconfig: kubeconfig, KubectlPath: kubectl, Config: cfg, Client: c, SpecTimeout: 3 * time.Minute}, nil
}

// DumpLogs writes the tail of confighash's log, for failed runs.
func (e *Env) DumpLogs(w io.Writer) {
	if l, ok := e.Confighash.(*localRunner); ok {
		text, err := controlplane.TailFile(l.LogPath(), 150)
		if err != nil {
			fmt.Fprintln(w, "reading confighash log:", err)
			return
		}
		fmt.Fprintf(w, "--- last lines of %s ---\n%s\n", l.LogPath(), text)
	}
}

// Teardown stops everything Setup started.
func (e *Env) Teardown() error { return e.stop() }

func joinStop(err error, stop func() error) error {
	if serr := stop(); serr != nil {
		return fmt.Errorf("%w (and stopping: %w)", err, serr)
	}
	return err
}

// ConfighashPID is the local confighash process, or 0 when confighash runs
// in a cluster.
func (e *Env) ConfighashPID() int {
	if l, ok := e.Confighash.(*localRunner); ok {
		return l.PID()
	}
	return 0
}

// AnotherConfighash returns a further confighash process beside
// Env.Confighash, for specs that run several replicas: it has its own
// ports, log (LogPath) and certificate directory under the control plane's
// directory, named name, and the same binary and flags. The caller starts
// and stops it. It needs the local control plane.
func (e *Env) AnotherConfighash(name string) (Runner, error) {
	if e.another == nil {
		return nil, errors.New("another confighash needs the local control plane")
	}
	return e.another(name)
}
