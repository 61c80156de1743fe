package sources

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/confighash/confighash/hasher"
)

// Reader looks sources up for the hasher.
//
// It reads the slimmed informer cache. A cache miss is not trusted on its
// own: a ConfigMap applied a moment before the Deployment that reads it (one
// `kubectl apply -f dir/`) may not have reached the informer when the
// Deployment is admitted. So a miss is confirmed with one live GET, when Live
// is set. Content that changed but is still stale in the cache is not
// detected here; the hook's watch on that source corrects the stamp moments
// later.
//
// Live GETs are bounded, because a caller controls how many sources a
// template names: at most LivePerLookup per Lookup (one admission), none
// for a source confirmed missing within the Misses TTL, and none at all
// under a context marked CacheOnly (dry-run). Under a context marked
// PreferLive, the same budget reads sources live first, cache misses or not
// (preferlive.go). A miss left unconfirmed counts
// as missing; should the source exist after all, its informer event brings
// the hook, which re-stamps.
type Reader struct {
	Cache client.Reader
	// Live, when set, confirms cache misses. The hook leaves it nil: its
	// events come from the same cache, which is current for the source that
	// changed.
	Live client.Reader
	// LivePerLookup bounds the live GETs of one Lookup; zero means
	// DefaultLivePerLookup.
	LivePerLookup int
	// Misses, when set, remembers confirmed misses across lookups.
	Misses *Misses
	// MaxKeys is the key bound applied to sources read live; it must be
	// the cache's (Slimmer.MaxKeys), so that a source is held or refused
	// alike whichever way it is read. Zero means DefaultMaxKeys.
	MaxKeys int
	// Versions, when set, spares a PreferLive lookup the GET of a source
	// the cache holds at the version a recent LIST found (versions.go).
	Versions *Versions
}

// DefaultLivePerLookup is the live GETs one admission may cause. The race
// live confirmation covers is sources created in the same apply as their
// reader, and a workload reads a handful of sources, so 8 confirms every
// source in all but pathological templates. At the default client budget
// (100 QPS) one admission can take at most 8% of a second's worth of API
// calls.
const DefaultLivePerLookup = 8

// Lookup returns a hasher.Lookup for sources in namespace. Its live budget
// is its own: one Lookup per admission makes the bound per request. Under
// PreferLive, sources the cache holds are read live first on a second
// budget of the same size, so that fresh reads never use up the GETs that
// confirm misses; a source the cache holds over the key bound is not read.
//
// A placeholder (see Slimmer) is never taken for content. One of a
// namespace that was not served when it was cached is read live, within
// the same budget; without budget, or over the key bound, the lookup fails
// with a *NotHeldError, and the caller leaves the stamp as it is.
//
// A source the cache holds but a fresh GET (another admission's, or the
// prefetch) found missing is read once more, after the cache, on the same
// budget: the cache may lag a delete, or have seen a create made after
// that GET, and only a later read tells which. Without budget the miss
// stands, since it saw every write made before the lookup began.
func (r Reader) Lookup(ctx context.Context, namespace string) hasher.Lookup {
	budget := r.livePerLookup()
	if r.Live == nil || cacheOnly(ctx) {
		budget = 0
	}
	slimmer := Slimmer{MaxKeys: r.MaxKeys}
	prefer, fresh, since := preferLive(ctx), budget, freshSince(ctx)
	return func(s hasher.Source) (hasher.Content, bool, error) {
		key := client.ObjectKey{Namespace: namespace, Name: s.Name}
		obj, err := NewObject(s.Kind)
		if err != nil {
			return hasher.Content{}, false, err
		}
		// Read only, never changed: no copy of the cached object.
		err = r.Cache.Get(ctx, key, obj, client.UnsafeDisableDeepCopy)
		cachedAt := time.Now()
		switch {
		case apierrors.IsNotFound(err) && budget > 0 && r.Misses.Recent(namespace, s, since):
			if prefer {
				// A GET sent since this lookup began found it missing:
				// as good as its own.
				return hasher.Content{}, false, nil
			}
			// Absent from the cache, and remembered absent: the memory may
			// be from before the source was created and reached the cache.
			return hasher.Content{}, false, unconfirmed(namespace, s)
		case apierrors.IsNotFound(err) && budget > 0:
			budget--
			obj, err = r.getLive(ctx, namespace, s, key, slimmer)
		case err == nil && prefer && fresh > 0 && placeholder(obj) != TooManyKeys:
			// A source the cache holds is read live first (PreferLive),
			// on a budget of its own, so that a template with more sources
			// than the budget still has its misses confirmed. One over the
			// key bound would be so live too: no GET. A failed read is no
			// worse than the cache: keep the cache's answer.
			fresh--
			found, liveErr := r.getLive(ctx, namespace, s, key, slimmer)
			if at, ok := missSentAt(liveErr); ok && at.Before(cachedAt) && fresh > 0 {
				// Another admission's GET missed it before the cache was
				// read: a delete the cache has not seen, or a create it
				// has. One GET sent after the cache read tells which.
				fresh--
				found, liveErr = r.getLive(preferLiveSince(ctx, cachedAt), namespace, s, key, slimmer)
			}
			if liveErr == nil || apierrors.IsNotFound(liveErr) {
				obj, err = found, liveErr
			}
		case err == nil && prefer && placeholder(obj) == "" && r.Versions.Current(ctx, namespace, s, obj):
			// Past the GET budget: the cache holds what a LIST sent since
			// the lookup began found. A consistent LIST waits for the
			// apiserver's watch cache to catch up (tens of milliseconds),
			// where a GET is one quorum read, so it serves only the
			// sources a GET cannot.
		case err == nil && budget > 0 && placeholder(obj) == NotServed:
			// A fresh object: decoding into the placeholder would merge
			// its marker into the live object.
			budget--
			obj, err = r.getLive(ctx, namespace, s, key, slimmer)
		}
		switch {
		case remembered(err):
			return hasher.Content{}, false, unconfirmed(namespace, s)
		case apierrors.IsNotFound(err):
			return hasher.Content{}, false, nil
		case err != nil:
			return hasher.Content{}, false, fmt.Errorf("reading %s in %s: %w", s, namespace, err)
		case obj.GetDeletionTimestamp() != nil:
			// Being deleted: pods started from now on will not find it.
			return hasher.Content{}, false, nil
		}
		c, err := Content(obj)
		return c, err == nil, err
	}
}

// livePerLookup is the live-read budget of one Lookup (LivePerLookup, or
// DefaultLivePerLookup when unset).
func (r Reader) livePerLookup() int {
	if r.LivePerLookup <= 0 {
		return DefaultLivePerLookup
	}
	return r.LivePerLookup
}

// getLive reads s live into a fresh object, slimmed like the cache (under
// the same key bound), and remembers a miss.
func (r Reader) getLive(ctx context.Context, namespace string, s hasher.Source, key client.ObjectKey, slimmer Slimmer) (client.Object, error) {
	obj, err := NewObject(s.Kind)
	if err != nil {
		return nil, err
	}
	sent := time.Now()
	err = r.Live.Get(ctx, key, obj)
	switch {
	case apierrors.IsNotFound(err):
		if at, ok := missSentAt(err); ok {
			sent = at // a GET shared or remembered was sent before this one asked
		}
		r.Misses.Add(namespace, s, sent)
	case err == nil:
		var slim any
		if slim, err = slimmer.Slim(obj); err == nil {
			obj = slim.(client.Object)
		}
	}
	return obj, err
}

// NewObject returns an empty object of source kind k.
func NewObject(k hasher.Kind) (client.Object, error) {
	switch k {
	case hasher.ConfigMap:
		return &corev1.ConfigMap{}, nil
	case hasher.Secret:
		return &corev1.Secret{}, nil
	}
	return nil, fmt.Errorf("unknown source kind %q", k)
}

// Unconfirmed is the NotHeldError Reason of a source whose absence rests
// only on memory (Misses, or RecentReads' remembered NotFound): that memory
// may be up to its TTL old, from before the source was created, while the
// cache (which the hook computes from) already holds it. Stamped as absent,
// the workload would be re-stamped by the hook's re-check with the
// content a moment later: a second rollout with nothing changed. So no
// stamp is computed from it; a source the cache lacks and a live GET made
// for this lookup does not find is absent, as before.
const Unconfirmed = "miss-unconfirmed"

func unconfirmed(namespace string, s hasher.Source) error {
	return &NotHeldError{Source: s, Namespace: namespace, Reason: Unconfirmed}
}

// rememberedMiss is a NotFound answered from RecentReads' memory rather
// than by the apiserver just now. It is a NotFound (apierrors.IsNotFound
// sees through it) to every caller but Lookup.
type rememberedMiss struct{ error }

func (e rememberedMiss) Unwrap() error { return e.error }

// remembered reports whether err is a NotFound from memory.
func remembered(err error) bool {
	var m rememberedMiss
	return errors.As(err, &m)
}
