package app

import "github.com/spf13/pflag"

// ClusterFlags are the flags of the commands that read a cluster where
// confighash runs (status, preview): how to reach it, and how confighash
// was installed there.
type ClusterFlags struct {
	Kubeconfig string
	Context    string
	// ConfighashNamespace means what --namespace means to serve;
	// ConfighashNamespaces is a namespaced-mode confighash's --namespaces.
	ConfighashNamespace  string
	ConfighashNamespaces []string
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
	fs.StringVar(&c.ConfighashNamespace, "namespace-of-confighash", c.ConfighashNamespace, "namespace confighash runs in; it never stamps or rolls workloads there")
	fs.StringSliceVar(&c.ConfighashNamespaces, "namespaces-of-confighash", c.ConfighashNamespaces, "the --namespaces of a namespaced-mode confighash: the only namespaces it serves")
	fs.StringArrayVar(&c.WorkloadKinds, "workload-kind", c.WorkloadKinds, "a --workload-kind of confighash, to look at that kind too (same syntax; repeatable)")
}
