package app

import (
	"fmt"
	"io"

	"github.com/spf13/pflag"
)

// ClusterFlags are the flags of the commands that read a cluster where
// confighash runs (status, preview): how to reach it, and how confighash
// was installed there. confighash publishes how it was installed (see
// useSettings): those flags only override what it publishes.
type ClusterFlags struct {
	Kubeconfig string
	Context    string
	// ConfighashNamespace means what --namespace means to serve, and is
	// where the published settings are read; ServedNamespaces is a
	// namespaced-mode confighash's --namespaces.
	ConfighashNamespace string
	ServedNamespaces    []string
	// WorkloadKinds are confighash's --workload-kind values, so that those
	// kinds are looked at too.
	WorkloadKinds []string
}

// defaultClusterFlags are the flag defaults: confighash's own.
func defaultClusterFlags() ClusterFlags {
	return ClusterFlags{ConfighashNamespace: DefaultOptions().Namespace}
}

func (c *ClusterFlags) bind(fs *pflag.FlagSet) {
	fs.StringVar(&c.Kubeconfig, "kubeconfig", c.Kubeconfig, "path to a kubeconfig; empty means $KUBECONFIG, ~/.kube/config, then in-cluster config")
	fs.StringVar(&c.Context, "context", c.Context, "kubeconfig context to use; empty means the current one")
	fs.StringVar(&c.ConfighashNamespace, "namespace-of-confighash", c.ConfighashNamespace, "namespace confighash runs in, where it publishes its settings; it never stamps or rolls workloads there")
	fs.StringSliceVar(&c.ServedNamespaces, "served-namespaces", c.ServedNamespaces, "the --namespaces of a namespaced-mode confighash: the only namespaces it serves; overrides what confighash publishes")
	fs.StringArrayVar(&c.WorkloadKinds, "workload-kind", c.WorkloadKinds, "a --workload-kind of confighash, to look at that kind too (same syntax; repeatable); overrides what confighash publishes")
}

// newCommandFlags is the flag set of a command that reads a cluster (status,
// preview): on -h or a bad flag it prints usage, then the flags' defaults.
func newCommandFlags(name, usage string, stderr io.Writer) *pflag.FlagSet {
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, usage)
		fs.PrintDefaults()
	}
	return fs
}

// checkOutput is the error of an --output that names no format.
func checkOutput(output string) error {
	if output != OutputTable && output != OutputJSON {
		return fmt.Errorf("--output must be %q or %q, not %q", OutputTable, OutputJSON, output)
	}
	return nil
}
