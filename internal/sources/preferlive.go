package sources

import (
	"context"
	"time"
)

// preferLiveKey marks a context whose lookups read live first; its value is
// the time from which a read counts as fresh.
type preferLiveKey struct{}

// PreferLive returns a context under which Reader lookups read each source
// as the apiserver holds it now, within the same per-Lookup budget that
// confirms misses, and the informer cache only once the budget is spent (or
// a live read fails). The webhook uses it when it stamps a new or changed
// template, and the hook when a re-check would re-stamp: a stamp computed
// from a cache that has not yet seen a config write made a moment earlier
// (Helm writes the ConfigMap, then the Deployment) is a second rollout when
// the hook corrects it. CacheOnly wins over it.
//
// Now means: no answer from a read sent before PreferLive was called is
// taken, however recent (a remembered GET, a remembered miss, a Versions
// LIST). A write that completed before the workload's write was sent
// completed before its admission began, so only a read sent after that can
// be sure to see it; a read sent a second earlier may not have, whatever the
// informer holds.
func PreferLive(ctx context.Context) context.Context {
	return preferLiveSince(ctx, time.Now())
}

// preferLiveSince is PreferLive with reads counting as fresh from since.
func preferLiveSince(ctx context.Context, since time.Time) context.Context {
	return context.WithValue(ctx, preferLiveKey{}, since)
}

func preferLive(ctx context.Context) bool {
	_, ok := ctx.Value(preferLiveKey{}).(time.Time)
	return ok
}

// freshSince is the time from which a read counts as fresh under ctx: the
// zero time (any remembered answer within its TTL) without PreferLive.
func freshSince(ctx context.Context) time.Time {
	since, _ := ctx.Value(preferLiveKey{}).(time.Time)
	return since
}
