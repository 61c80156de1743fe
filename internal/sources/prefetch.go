package sources

import (
	"context"
	"sync"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/confighash/confighash/hasher"
)

// Prefetch sends, all at once, the live GETs a Lookup begun under ctx
// would send one after another for refs' sources, so that the lookup's own
// reads are answered by RecentReads with what these found. Under PreferLive each
// source is one quorum read, and a template reading a ConfigMap and a
// Secret otherwise waits for two in series. It reads what Lookup would:
// within the same budget, nothing over the key bound, nothing under
// CacheOnly or without PreferLive, and only through a RecentReads (another
// Live would not remember them for the lookup).
func (r Reader) Prefetch(ctx context.Context, namespace string, refs []hasher.Reference) {
	live, ok := r.Live.(*RecentReads)
	if !ok || !preferLive(ctx) || cacheOnly(ctx) {
		return
	}
	budget := r.livePerLookup()
	var wg sync.WaitGroup
	seen := map[hasher.Source]bool{}
	for _, ref := range refs {
		s := ref.Source
		if seen[s] {
			continue
		}
		if len(seen) == budget {
			break
		}
		seen[s] = true
		key := client.ObjectKey{Namespace: namespace, Name: s.Name}
		cached, err := NewObject(s.Kind)
		if err != nil {
			continue
		}
		if r.Cache.Get(ctx, key, cached, client.UnsafeDisableDeepCopy) == nil && placeholder(cached) == TooManyKeys {
			continue
		}
		wg.Go(func() {
			obj, err := NewObject(s.Kind)
			if err == nil {
				_ = live.Get(ctx, key, obj) // what it finds, the lookup reads
			}
		})
	}
	wg.Wait()
}
