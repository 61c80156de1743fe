package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/confighash/confighash/internal/kindcheck"
	"github.com/confighash/confighash/internal/serversettings"
	"github.com/confighash/confighash/internal/status"
	"github.com/confighash/confighash/internal/window"
	"github.com/confighash/confighash/internal/workload"
)

// statusUsage is the help text. The kinds it names come from the registry
// (through status.KindsHelp), so that adding a kind needs no edit here.
func statusUsage() string {
	return `usage: confighash status [KIND/NAME | NAME] [-n NAMESPACE | -A] [-o table|json] [flags]
       confighash status --check-install [-o table|json] [flags]
       kubectl confighash [KIND/NAME | NAME] [flags]     (the binary installed as kubectl-confighash)

Explains whether each workload the hook re-stamps carries the checksum its
ConfigMaps and Secrets give now. States: current, stale, held, halted,
waiting, missing-source, not-watched, not-injected, unknown. Exits 1 when a
workload is stale, held, halted, waiting, missing a source or of a kind the
hook refuses to watch, or when --check-install finds a problem; 2 on a bad
command line.

KIND is ` + status.KindsHelp() + `;
a bare NAME is looked up among all of them.

How confighash was installed (the namespaces and kinds it serves, its
webhook configuration, the hook's --rollout-window and --freeze) is read from the settings it publishes, the
ConfigMap ` + serversettings.ConfigMapName + ` in --namespace-of-confighash; a flag given
overrides them, with a line on stderr when they disagree.

flags:
`
}

// StatusOptions are the flags of `confighash status`.
type StatusOptions struct {
	ClusterFlags
	Namespace     string
	AllNamespaces bool
	Output        string
	CheckInstall  bool
	// WebhookConfigName says how confighash was installed; it means what
	// --webhook-config-name means to serve.
	WebhookConfigName string
	// MaxWaveSize is the hook's --max-wave-size: with 0 it runs no waves,
	// so no halt holds a reader back.
	MaxWaveSize int
	windowFlags
}

// Output formats.
const (
	OutputTable = "table"
	OutputJSON  = "json"
)

// DefaultStatusOptions are the flag defaults.
func DefaultStatusOptions() StatusOptions {
	serve := DefaultOptions()
	return StatusOptions{
		ClusterFlags:      defaultClusterFlags(),
		Output:            OutputTable,
		WebhookConfigName: serve.WebhookConfigName,
		MaxWaveSize:       serve.Hook.MaxWaveSize,
	}
}

func (o *StatusOptions) bind(fs *pflag.FlagSet) {
	o.ClusterFlags.bind(fs)
	fs.StringVarP(&o.Namespace, "namespace", "n", o.Namespace, "namespace to look in; empty means the kubeconfig context's, else default")
	fs.BoolVarP(&o.AllNamespaces, "all-namespaces", "A", o.AllNamespaces, "look in every namespace")
	fs.StringVarP(&o.Output, "output", "o", o.Output, `output format: "table" or "json"`)
	fs.BoolVar(&o.CheckInstall, "check-install", o.CheckInstall, "check the webhook configuration and that the webhook can be reached, instead of reporting on workloads")
	fs.StringVar(&o.WebhookConfigName, "webhook-config-name", o.WebhookConfigName, "MutatingWebhookConfiguration confighash is registered in; overrides what confighash publishes")
	fs.IntVar(&o.MaxWaveSize, "max-wave-size", o.MaxWaveSize, "the hook's --max-wave-size: 0 for no waves, and so no halts; overrides what confighash publishes")
	o.windowFlags.bind(fs)
}

// statusArgs is a validated `confighash status` command line.
type statusArgs struct {
	StatusOptions
	fs      *pflag.FlagSet
	target  status.Target
	kinds   workload.Registry
	windows window.Cluster
}

// statusSettings are the settings confighash publishes that status reads,
// each overridden by its flag.
func statusSettings() []settingFlag {
	return append([]settingFlag{
		{serversettings.KeyNamespaces, "served-namespaces"},
		{serversettings.KeyWorkloadKind, "workload-kind"},
		{serversettings.KeyWebhookConfigName, "webhook-config-name"},
		{serversettings.KeyMaxWaveSize, "max-wave-size"},
	}, windowSettings()...)
}

// parseStatusArgs parses the command line and resolves it with no
// published settings; errors are usage errors.
func parseStatusArgs(args []string, stderr io.Writer) (*statusArgs, error) {
	a, err := parseStatusFlags(args, stderr)
	if err != nil {
		return a, err
	}
	return a, a.resolve()
}

// parseStatusFlags parses the command line and checks all of it but the
// workload named, whose kind may be one the cluster's settings add.
func parseStatusFlags(args []string, stderr io.Writer) (*statusArgs, error) {
	a := &statusArgs{StatusOptions: DefaultStatusOptions()}
	a.fs = newCommandFlags("confighash status", statusUsage(), stderr)
	a.bind(a.fs)
	if err := a.fs.Parse(args); err != nil {
		return nil, err
	}
	var errs []error
	if a.fs.NArg() > 1 {
		errs = append(errs, fmt.Errorf("want at most one workload, got %d: %q", a.fs.NArg(), a.fs.Args()))
	}
	if err := checkOutput(a.Output); err != nil {
		errs = append(errs, err)
	}
	if a.AllNamespaces && a.fs.NArg() > 0 {
		errs = append(errs, errors.New("a workload cannot be named with --all-namespaces"))
	}
	if a.CheckInstall && (a.fs.NArg() > 0 || a.AllNamespaces) {
		errs = append(errs, errors.New("--check-install takes no workload and no --all-namespaces"))
	}
	if a.ConfighashNamespace == "" {
		errs = append(errs, errors.New("--namespace-of-confighash must not be empty"))
	}
	errs = append(errs, a.checkSettings()...)
	return a, errors.Join(errs...)
}

// checkSettings checks the values the published settings may set, and
// resolves the kinds.
func (a *statusArgs) checkSettings() []error {
	var errs []error
	kinds, err := workloadKinds(a.WorkloadKinds)
	if err != nil {
		errs = append(errs, err)
	}
	a.kinds = kinds
	if a.WebhookConfigName == "" {
		errs = append(errs, errors.New("--webhook-config-name must not be empty"))
	}
	if a.MaxWaveSize < 0 {
		errs = append(errs, fmt.Errorf("--max-wave-size must be at least 0, not %d", a.MaxWaveSize))
	}
	windows, err := a.cluster()
	if err != nil {
		errs = append(errs, err)
	}
	a.windows = windows
	return append(errs, validateNamespaces(a.ConfighashNamespace, a.ServedNamespaces)...)
}

// resolve checks the settings again and resolves the workload named
// against the kinds.
func (a *statusArgs) resolve() error {
	if err := errors.Join(a.checkSettings()...); err != nil {
		return err
	}
	return a.resolveTarget()
}

// resolveTarget resolves the workload named against the kinds.
func (a *statusArgs) resolveTarget() error {
	if a.fs.NArg() == 0 {
		return nil
	}
	t, err := status.ParseTarget(a.fs.Arg(0), a.kinds)
	a.target = t
	return err
}

// Status runs `confighash status` with args (after the subcommand).
func Status(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	a, err := parseStatusFlags(args, stderr)
	if errors.Is(err, pflag.ErrHelp) {
		return nil
	}
	if err != nil {
		return usageError{err}
	}
	cfg, ns, err := statusConfig(a.Kubeconfig, a.Context, a.Namespace)
	if err != nil {
		return err
	}
	c, err := status.NewClient(cfg)
	if err != nil {
		return err
	}
	if err := useSettings(ctx, c, a.ConfighashNamespace, a.fs, statusSettings(), "confighash status", stderr); err != nil {
		return err
	}
	// The flags were checked: what fails now came from the cluster.
	if err := errors.Join(a.checkSettings()...); err != nil {
		return fmt.Errorf("with the settings confighash publishes: %w", err)
	}
	if err := a.resolveTarget(); err != nil {
		return usageError{err}
	}

	if a.CheckInstall {
		r := status.CheckInstall(ctx, c, status.InstallOptions{WebhookConfigName: a.WebhookConfigName, ConfighashNamespace: a.ConfighashNamespace, ServedNamespaces: a.ServedNamespaces})
		if a.Output == OutputJSON {
			err = status.WriteJSON(stdout, r)
		} else {
			err = status.WriteInstallTable(stdout, r)
		}
		if err != nil {
			return err
		}
		if !r.OK {
			return statusFailure("the installation check failed")
		}
		return nil
	}

	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return fmt.Errorf("creating discovery client: %w", err)
	}
	rep, err := status.Collect(ctx, c, status.Options{
		Target: a.target, Namespace: ns, AllNamespaces: a.AllNamespaces, ConfighashNamespace: a.ConfighashNamespace,
		ServedNamespaces: a.ServedNamespaces, Kinds: a.kinds,
		// The hook's own check of custom kinds: status reports the kinds it
		// refuses to watch.
		KindChecker: kindcheck.Checker{Discovery: dc},
		Windows:     a.windows,
		NoWaves:     a.MaxWaveSize == 0,
	})
	if err != nil {
		return err
	}
	switch {
	case a.Output == OutputJSON:
		err = status.WriteJSON(stdout, rep)
	case len(rep.Workloads) == 0 && a.AllNamespaces:
		_, err = fmt.Fprintln(stderr, "No workloads found.")
	case len(rep.Workloads) == 0:
		_, err = fmt.Fprintf(stderr, "No workloads found in namespace %s.\n", ns)
	default:
		err = status.WriteTable(stdout, rep, status.TableOptions{
			AllNamespaces: a.AllNamespaces, Details: a.target.Name != "", Now: time.Now(),
		})
	}
	if err != nil {
		return err
	}
	bad := 0
	for i := range rep.Workloads {
		if rep.Workloads[i].State.NeedsAttention() {
			bad++
		}
	}
	if bad > 0 {
		return statusFailure(fmt.Sprintf("%d workload(s) stale, held, halted, waiting, missing a source or not watched", bad))
	}
	return nil
}

// statusConfig loads the client config as kubectl does, and the namespace
// to use: the flag's, else the context's, else default.
func statusConfig(kubeconfig, kubeContext, namespace string) (*rest.Config, string, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = kubeconfig
	cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: kubeContext})
	cfg, err := cc.ClientConfig()
	if err != nil {
		return nil, "", fmt.Errorf("loading kubeconfig: %w", err)
	}
	if namespace == "" {
		if namespace, _, err = cc.Namespace(); err != nil || namespace == "" {
			namespace = "default"
		}
	}
	return cfg, namespace, nil
}

// statusFailure is a report that found something wrong: exit code 1, and
// a one-line summary on stderr after the report itself.
type statusFailure string

func (e statusFailure) Error() string { return string(e) }

// ExitCode implements exitCoder.
func (statusFailure) ExitCode() int { return 1 }
