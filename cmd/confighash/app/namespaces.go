package app

import (
	"fmt"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/cache"

	"github.com/confighash/confighash/internal/injection"
)

// validateNamespaces refuses a --namespaces list that cannot work. A name
// that is no namespace name, or kube-system or confighash's own namespace
// (which the policy never serves), would be cached and granted for
// nothing and look served: better to stop at start than to stamp nothing
// there without a word.
func validateNamespaces(own string, names []string) []error {
	var errs []error
	seen := map[string]bool{}
	for _, n := range names {
		switch {
		case n == "":
			errs = append(errs, fmt.Errorf("--namespaces has an empty name"))
		case len(validation.IsDNS1123Label(n)) > 0:
			errs = append(errs, fmt.Errorf("--namespaces: %q is not a namespace name", n))
		case n == metav1.NamespaceSystem || n == own:
			errs = append(errs, fmt.Errorf("--namespaces: %s is never served (kube-system and confighash's own namespace %s are excluded)", n, own))
		case seen[n]:
			errs = append(errs, fmt.Errorf("--namespaces: %s given twice", n))
		}
		seen[n] = true
	}
	return errs
}

// cacheNamespaces is the cache's DefaultNamespaces for --namespaces: the
// informers of ConfigMaps, Secrets and workloads list and watch only these
// namespaces, each on its own (which a Role per namespace allows). nil
// caches every namespace. Namespaces themselves are cluster-scoped and
// stay one cluster-wide informer (see Permissions).
func cacheNamespaces(names []string) map[string]cache.Config {
	if len(names) == 0 {
		return nil
	}
	m := make(map[string]cache.Config, len(names))
	for _, n := range slices.Compact(slices.Sorted(slices.Values(names))) {
		m[n] = cache.Config{}
	}
	return m
}

// policy is the one injection policy of this confighash: the webhook, its
// configuration and the hook all use it.
func (o Options) policy() injection.Policy {
	return injection.New(o.Namespace, o.Namespaces...)
}
