package restamp

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/confighash/confighash/hasher"
	"github.com/confighash/confighash/internal/contract"
	"github.com/confighash/confighash/internal/sources"
)

// stale reports whether the stored stamp must give way to fresh. A stamp
// that differs only because confighash's HMAC key changed is kept: replacing
// it would roll every workload at once although no pod would read anything
// new.
//
//   - A legacy v1 stamp, or any other not of the current format, is never
//     compared with content (hasher.Compare calls it Differs): it is
//     re-stamped, rolling the workload once. confighash cannot tell its own
//     v1 stamps from ones copied from another namespace, and keeping a
//     matching one would tell the copier whether a guess was right.
//   - A stamp under another key cannot be compared at all. On a re-check
//     (the start-up replay, a template write) it is kept and reported. On a
//     change to a source seen live it is re-stamped under the current key,
//     unless the change left what the pods read as it was (readUnchanged,
//     given before, the content its changes recorded).
//   - A stamp that differs because a source's ignore annotation was added
//     or removed is kept (check_ignored.go).
func (r *reconciler) stale(ctx context.Context, obj client.Object, req Request, before map[hasher.Source]prior, refs []hasher.Reference, lookup hasher.Lookup, stored, fresh string) (bool, error) {
	switch hasher.Compare(stored, fresh) {
	case hasher.Same:
		return false, nil
	case hasher.OtherKey:
		if !req.Recheck && !r.readUnchanged(req, before, refs, lookup, fresh) {
			return true, nil
		}
		storedID, _ := hasher.StampKeyID(stored)
		freshID, _ := hasher.StampKeyID(fresh)
		r.metrics.kept(req.KindName, keptOtherKey)
		r.events.Eventf(obj, nil, corev1.EventTypeWarning, contract.ReasonKeyChanged, "Restamp",
			"stamped under HMAC key %s, but confighash now uses key %s: not rolling; the next change to its config re-stamps it", storedID, freshID)
		log.FromContext(ctx).Info("stamp made under another HMAC key; keeping it until its config changes",
			"stampKeyID", storedID, "keyID", freshID)
		return false, nil
	}
	if _, ok := hasher.StampKeyID(stored); !ok {
		// Not stamped, or a stamp confighash does not write: nothing to
		// keep, and no ignore switch can make a v2 checksum equal it.
		return true, nil
	}
	kept, err := r.keepAcrossIgnore(ctx, req, refs, lookup, stored)
	return !kept, err
}

// confirmLive reports whether a re-check may write fresh, the stamp the
// cache gives. A change to a source comes from this cache, which is then
// current for that source; a re-check does not (it follows a template
// write, or the start-up replay), and the cache may still lag a config write
// the stored stamp was made from: the webhook reads live when it stamps a
// template change. So before a re-check re-stamps, its sources are read
// again, live first (sources.PreferLive, within the default live-read
// budget), and the write goes ahead only if they give the same stamp. If
// they do not, the cache has an event still to come, which brings the hook
// back with that content; writing now would roll the pods for nothing, and
// likely once more when the event arrives. It runs after the write budget
// is granted, so its reads go no faster than the hook's writes.
func (r *reconciler) confirmLive(ctx context.Context, req Request, refs []hasher.Reference, fresh string) (bool, error) {
	if !req.Recheck || r.live == nil {
		return true, nil
	}
	r.metrics.checksum()
	lookup := sources.Reader{Cache: r.client, Live: r.live, MaxKeys: r.maxKeys}.Lookup(sources.PreferLive(ctx), req.Namespace)
	res, err := hasher.Checksum(r.key, req.Namespace, refs, lookup)
	if err != nil {
		return false, fmt.Errorf("confirming checksum live: %w", err)
	}
	if res.Checksum == fresh && len(res.Missing) == 0 {
		return true, nil
	}
	r.metrics.kept(req.KindName, keptCacheBehind)
	log.FromContext(ctx).Info("re-check found the cache behind the apiserver; not re-stamping until its event arrives")
	return false, nil
}
