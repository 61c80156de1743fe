package sources

import "context"

// preferLiveKey marks a context whose lookups read live first.
type preferLiveKey struct{}

// PreferLive returns a context under which Reader lookups read each source
// live first, within the same per-Lookup budget that confirms misses, and
// the informer cache only once the budget is spent (or a live read fails).
// The webhook uses it when it stamps a new or changed template, and the hook
// when a re-check would re-stamp: a stamp computed from a cache that has not
// yet seen a config write made a moment earlier (Helm writes the ConfigMap,
// then the Deployment) is a second rollout when the hook corrects it.
// CacheOnly wins over it.
func PreferLive(ctx context.Context) context.Context {
	return context.WithValue(ctx, preferLiveKey{}, true)
}

func preferLive(ctx context.Context) bool {
	v, _ := ctx.Value(preferLiveKey{}).(bool)
	return v
}
