package app

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/confighash/confighash/internal/injection"
	"github.com/confighash/confighash/internal/sources"
)

// sourceCache is how the manager's cache holds ConfigMaps and Secrets
// (see package sources): slimmed, as placeholders outside the namespaces
// served or over --max-source-keys, and with the placeholders of a
// namespace that became served later filled in.
type sourceCache struct {
	ctx     context.Context
	policy  injection.Policy
	slimmer sources.Slimmer
	fills   *sources.Fills
	// namespaces reads the Namespace cache. It is set once the manager
	// exists, before its cache starts, and so before the first transform.
	namespaces injection.Getter
}

func newSourceCache(ctx context.Context, o Options) *sourceCache {
	sc := &sourceCache{ctx: ctx, policy: o.policy(), fills: sources.NewFills()}
	sc.slimmer = sources.Slimmer{Serves: sc.serves, MaxKeys: o.MaxSourceKeys}
	return sc
}

// serves is the transform's question. The cache's Get waits for the
// Namespace informer to sync, so the first sources listed are not taken
// for unserved while the namespaces are still arriving. A namespace not
// cached yet, or unreadable, is not served: its sources become
// placeholders, and the Filler reads them once the namespace arrives.
func (sc *sourceCache) serves(namespace string) bool {
	if sc.namespaces == nil {
		return false
	}
	d, err := sc.policy.Check(sc.ctx, sc.namespaces, namespace)
	return err == nil && d.Serves
}

// byObject is the cache's ByObject for ConfigMaps and Secrets.
func (sc *sourceCache) byObject(ignoreHelmReleases bool) map[client.Object]cache.ByObject {
	return map[client.Object]cache.ByObject{
		&corev1.ConfigMap{}: {Transform: sc.slimmer.SlimInPlace},
		&corev1.Secret{}:    sc.slimmer.SecretCache(ignoreHelmReleases),
	}
}

// newClient is the manager's NewClient: its cached reads, the hook's,
// see filled placeholders. Unstructured objects (Argo Rollouts and the
// --workload-kind kinds) are read from the cache too, as the typed kinds
// are: controller-runtime's client reads them live unless told otherwise,
// and the hook has no get on workloads (see Permissions), so in a cluster
// every read of a Rollout was refused and no Rollout was ever re-stamped.
// The hook reads a custom kind only once it watches it, so its informer
// is there.
func (sc *sourceCache) newClient(cfg *rest.Config, opts client.Options) (client.Client, error) {
	if opts.Cache != nil && opts.Cache.Reader != nil {
		opts.Cache.Reader = sc.fills.Reader(opts.Cache.Reader)
		opts.Cache.Unstructured = true
	}
	return client.New(cfg, opts)
}

// reader is the cache as the webhook reads it.
func (sc *sourceCache) reader(mgr manager.Manager) client.Reader {
	return sc.fills.Reader(mgr.GetCache())
}

// start binds the transform to the manager's Namespace cache and adds the
// Filler, on every replica.
func (sc *sourceCache) start(ctx context.Context, mgr manager.Manager) error {
	sc.namespaces = mgr.GetCache()
	filler := sources.NewFiller(sc.fills, mgr.GetAPIReader(), sc.slimmer, func(name string, labels map[string]string) bool {
		return sc.policy.Decide(name, labels).Serves
	})
	nsInformer, err := mgr.GetCache().GetInformer(ctx, &corev1.Namespace{})
	if err != nil {
		return fmt.Errorf("starting informer for namespaces: %w", err)
	}
	if _, err := nsInformer.AddEventHandler(filler.NamespaceHandler()); err != nil {
		return fmt.Errorf("watching namespaces for fills: %w", err)
	}
	for _, obj := range []client.Object{&corev1.ConfigMap{}, &corev1.Secret{}} {
		inf, err := mgr.GetCache().GetInformer(ctx, obj)
		if err != nil {
			return fmt.Errorf("starting informer for %T: %w", obj, err)
		}
		if _, err := inf.AddEventHandler(filler.SourceHandler()); err != nil {
			return fmt.Errorf("watching %T for fills: %w", obj, err)
		}
	}
	if err := mgr.Add(filler); err != nil {
		return fmt.Errorf("adding fills: %w", err)
	}
	return nil
}
