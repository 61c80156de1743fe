package sources

import "context"

// cacheOnlyKey marks a context whose lookups must not go live.
type cacheOnlyKey struct{}

// CacheOnly returns a context under which Reader lookups read the informer
// cache only. The webhook uses it for dry-run requests: they change nothing,
// so a stamp from the cache is good enough, and a caller allowed only to
// dry-run must not be able to turn admissions into API load.
func CacheOnly(ctx context.Context) context.Context {
	return context.WithValue(ctx, cacheOnlyKey{}, true)
}

func cacheOnly(ctx context.Context) bool {
	v, _ := ctx.Value(cacheOnlyKey{}).(bool)
	return v
}
