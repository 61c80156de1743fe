package app

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/pflag"
	"k8s.io/client-go/discovery"

	"github.com/confighash/confighash/internal/injection"
	"github.com/confighash/confighash/internal/kindcheck"
	"github.com/confighash/confighash/internal/preview"
	"github.com/confighash/confighash/internal/serversettings"
	"github.com/confighash/confighash/internal/status"
	"github.com/confighash/confighash/internal/window"
	"github.com/confighash/confighash/internal/workload"
)

const previewUsage = `usage: confighash preview -f FILE|- [-n NAMESPACE] [-o table|json] [flags]
       kubectl confighash preview -f FILE|- [flags]     (the binary installed as kubectl-confighash)

Shows what applying one changed ConfigMap or Secret (YAML or JSON, from
FILE or, with -f -, stdin) would roll: the workloads that read it whose
checksum changes, which of the keys they read change, the waves they
roll in and when each may start (a rollout window or a freeze may hold
it, an urgent source lets it through); and the readers that do not roll,
and why. It reads the cluster and writes nothing; it never prints a value. It needs read access to the
namespace's workloads, ConfigMaps and Secrets.

How confighash was installed (the namespaces and kinds it serves, the
hook's --max-wave-size, --max-source-keys, --rollout-window and --freeze)
is read from the settings it publishes, the ConfigMap confighash-settings
in --namespace-of-confighash; a flag given overrides them, with a line on stderr when they disagree.

The namespace is the object's, else --namespace, else the kubeconfig
context's. Exits 0 whether or not something rolls, 1 when the cluster
cannot be read, 2 on a bad command line or input.

flags:
`

// PreviewOptions are the flags of `confighash preview`.
type PreviewOptions struct {
	ClusterFlags
	Namespace string
	Output    string
	// File is -f: a path, or "-" for stdin.
	File string
	// MaxWaveSize and MaxSourceKeys are the hook's --max-wave-size and
	// --max-source-keys, when it publishes none.
	MaxWaveSize   int
	MaxSourceKeys int
	windowFlags
}

// DefaultPreviewOptions are the flag defaults.
func DefaultPreviewOptions() PreviewOptions {
	serve := DefaultOptions()
	return PreviewOptions{ClusterFlags: defaultClusterFlags(), Output: OutputTable,
		MaxWaveSize: serve.Hook.MaxWaveSize, MaxSourceKeys: serve.MaxSourceKeys}
}

func (o *PreviewOptions) bind(fs *pflag.FlagSet) {
	fs.StringVarP(&o.File, "filename", "f", o.File, `the changed ConfigMap or Secret, YAML or JSON; "-" reads stdin`)
	o.ClusterFlags.bind(fs)
	fs.StringVarP(&o.Namespace, "namespace", "n", o.Namespace, "namespace of an object that names none; empty means the kubeconfig context's, else default")
	fs.StringVarP(&o.Output, "output", "o", o.Output, `output format: "table" or "json"`)
	fs.IntVar(&o.MaxWaveSize, "max-wave-size", o.MaxWaveSize, "the hook's --max-wave-size: the largest wave, 0 for none; overrides what confighash publishes")
	fs.IntVar(&o.MaxSourceKeys, "max-source-keys", o.MaxSourceKeys, "the hook's --max-source-keys; overrides what confighash publishes")
	o.windowFlags.bind(fs)
}

// previewArgs is a validated `confighash preview` command line.
type previewArgs struct {
	PreviewOptions
	fs      *pflag.FlagSet
	kinds   workload.Registry
	windows window.Cluster
}

// previewSettings are the settings confighash publishes that preview
// reads, each overridden by its flag.
func previewSettings() []settingFlag {
	return append([]settingFlag{
		{serversettings.KeyNamespaces, "served-namespaces"},
		{serversettings.KeyWorkloadKind, "workload-kind"},
		{serversettings.KeyMaxWaveSize, "max-wave-size"},
		{serversettings.KeyMaxSourceKeys, "max-source-keys"},
	}, windowSettings()...)
}

// parsePreviewArgs parses the command line; errors are usage errors.
func parsePreviewArgs(args []string, stderr io.Writer) (*previewArgs, error) {
	a := &previewArgs{PreviewOptions: DefaultPreviewOptions()}
	a.fs = newCommandFlags("confighash preview", previewUsage, stderr)
	a.bind(a.fs)
	if err := a.fs.Parse(args); err != nil {
		return nil, err
	}
	var errs []error
	if a.File == "" {
		errs = append(errs, errors.New("-f FILE is required (-f - reads stdin)"))
	}
	if a.fs.NArg() > 0 {
		errs = append(errs, fmt.Errorf("preview takes no arguments, got %q: name the file with -f", a.fs.Args()))
	}
	if err := checkOutput(a.Output); err != nil {
		errs = append(errs, err)
	}
	if a.ConfighashNamespace == "" {
		errs = append(errs, errors.New("--namespace-of-confighash must not be empty"))
	}
	errs = append(errs, a.checkSettings()...)
	return a, errors.Join(errs...)
}

// checkSettings checks the values the published settings may set, and
// resolves the kinds.
func (a *previewArgs) checkSettings() []error {
	var errs []error
	kinds, err := workloadKinds(a.WorkloadKinds)
	if err != nil {
		errs = append(errs, err)
	}
	a.kinds = kinds
	// 0 is the hook's: every reader at once.
	if a.MaxWaveSize < 0 {
		errs = append(errs, fmt.Errorf("--max-wave-size must be at least 0, not %d", a.MaxWaveSize))
	}
	if a.MaxSourceKeys < 1 {
		errs = append(errs, fmt.Errorf("--max-source-keys must be at least 1, not %d", a.MaxSourceKeys))
	}
	windows, err := a.cluster()
	if err != nil {
		errs = append(errs, err)
	}
	a.windows = windows
	return append(errs, validateNamespaces(a.ConfighashNamespace, a.ServedNamespaces)...)
}

// Preview runs `confighash preview` with args (after the subcommand);
// stdin (nil for os.Stdin) is read for -f -.
func Preview(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	a, err := parsePreviewArgs(args, stderr)
	if errors.Is(err, pflag.ErrHelp) {
		return nil
	}
	if err != nil {
		return usageError{err}
	}
	in, err := readPreviewInput(a.File, stdin)
	if err != nil {
		return err
	}
	cfg, ns, err := statusConfig(a.Kubeconfig, a.Context, a.Namespace)
	if err != nil {
		return err
	}
	switch {
	case in.Namespace == "":
	case a.Namespace != "" && a.Namespace != in.Namespace:
		return usageError{fmt.Errorf("the input's namespace %s is not --namespace %s", in.Namespace, a.Namespace)}
	default:
		ns = in.Namespace
	}
	c, err := status.NewClient(cfg)
	if err != nil {
		return err
	}
	if err := useSettings(ctx, c, a.ConfighashNamespace, a.fs, previewSettings(), "confighash preview", stderr); err != nil {
		return err
	}
	// The flags were checked: what fails now came from the cluster.
	if err := errors.Join(a.checkSettings()...); err != nil {
		return fmt.Errorf("with the settings confighash publishes: %w", err)
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return fmt.Errorf("creating discovery client: %w", err)
	}
	facts, err := preview.Gather(ctx, c, in, ns, preview.Options{
		Kinds: a.kinds, Policy: injection.New(a.ConfighashNamespace, a.ServedNamespaces...), MaxKeys: a.MaxSourceKeys,
		// The hook's own check of custom kinds, as status makes it.
		KindChecker: kindcheck.Checker{Discovery: dc},
		Windows:     a.windows,
	})
	if err != nil {
		return err
	}
	// Any key gives the same answers (see internal/preview): a fresh one,
	// never confighash's.
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return fmt.Errorf("making a key: %w", err)
	}
	rep, err := preview.Compute(facts, key, a.MaxWaveSize)
	if err != nil {
		return err
	}
	if a.Output == OutputJSON {
		return preview.WriteJSON(stdout, rep)
	}
	return preview.WriteTable(stdout, rep)
}

// readPreviewInput parses -f: a file, or stdin for "-". A file that cannot
// be opened and input that is not one ConfigMap or Secret are usage errors.
func readPreviewInput(file string, stdin io.Reader) (*preview.Input, error) {
	r := stdin
	if r == nil {
		r = os.Stdin
	}
	if file != "-" {
		f, err := os.Open(file) //nolint:gosec // the user names the file to read
		if err != nil {
			return nil, usageError{fmt.Errorf("-f: %w", err)}
		}
		defer f.Close()
		r = f
	}
	in, err := preview.Parse(r)
	var ie *preview.InputError
	if errors.As(err, &ie) {
		return nil, usageError{fmt.Errorf("-f %s: %w", file, err)}
	}
	if err != nil {
		return nil, fmt.Errorf("-f %s: %w", file, err)
	}
	return in, nil
}
