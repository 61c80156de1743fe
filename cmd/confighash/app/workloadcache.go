package app

import (
	"fmt"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/confighash/confighash/internal/workload"
)

// workloadCache is how the manager's cache holds workloads: slimmed in the
// namespaces served, identity copies elsewhere (the transform, with
// sourceCache.serves), and the workloads of a namespace served later
// filled in (workload.FilledCache, workload.Filler).
type workloadCache struct {
	kinds workload.Registry
	cache *workload.FilledCache
}

// newCache is the manager's NewCache.
func (wc *workloadCache) newCache(cfg *rest.Config, opts cache.Options) (cache.Cache, error) {
	c, err := cache.New(cfg, opts)
	if err != nil {
		return nil, err
	}
	wc.cache = workload.NewFilledCache(c, wc.kinds, workload.NewFills())
	return wc.cache, nil
}

// start adds the Filler, which runs on the leader, as the workload
// informers do.
func (wc *workloadCache) start(mgr manager.Manager, sc *sourceCache) error {
	serves := func(name string, labels map[string]string) bool { return sc.policy.Decide(name, labels).Serves }
	if err := mgr.Add(workload.NewFiller(wc.cache, mgr.GetAPIReader(), serves, sc.serves)); err != nil {
		return fmt.Errorf("adding workload fills: %w", err)
	}
	return nil
}
