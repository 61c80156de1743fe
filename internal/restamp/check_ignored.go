package restamp

import (
	"context"
	"fmt"
	"sync"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/confighash/confighash/hasher"
)

// ignored reports whether a source (a slimmed object from the cache, which
// keeps the annotation) carries contract.IgnoreAnnotation. Its events
// concern no reader: its content is in no checksum.
func ignored(obj client.Object) bool {
	return hasher.IgnoredBy(obj.GetAnnotations())
}

// maxToggleBytes bounds the pre-image hashed per reconcile to tell an
// ignore toggle (hasher.ToggleCheck): tens of milliseconds of one core.
const maxToggleBytes = 32 << 20

// MaxToggleEntries caps the ignore toggles the hook remembers; see toggles.
const MaxToggleEntries = 10000

// toggles remembers the sources whose IgnoreAnnotation the hook saw added
// or removed, so that a stamp which differs because of one is told in one
// try rather than one per source. It is only a hint: a toggle made while
// another replica led, or forgotten, is still found, at more cost.
type toggles struct {
	max   int
	mu    sync.Mutex
	set   map[toggleKey]struct{}
	order []toggleKey // oldest first
}

type toggleKey struct {
	namespace string
	source    hasher.Source
}

func newToggles(limit int) *toggles {
	return &toggles{max: limit, set: map[toggleKey]struct{}{}}
}

// saw records that src in namespace had its ignore annotation toggled,
// forgetting the oldest record when full.
func (t *toggles) saw(namespace string, src hasher.Source) {
	if t == nil {
		return
	}
	k := toggleKey{namespace, src}
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, ok := t.set[k]; ok {
		return
	}
	if len(t.order) >= max(t.max, 1) {
		delete(t.set, t.order[0])
		t.order = t.order[1:]
	}
	t.set[k] = struct{}{}
	t.order = append(t.order, k)
}

// seen reports, for sources in namespace, whether a toggle was recorded.
func (t *toggles) seen(namespace string) func(hasher.Source) bool {
	if t == nil {
		return nil
	}
	return func(src hasher.Source) bool {
		t.mu.Lock()
		defer t.mu.Unlock()
		_, ok := t.set[toggleKey{namespace, src}]
		return ok
	}
}

// keepAcrossIgnore reports whether a stamp that differs from fresh is kept
// because of the ignore annotation rather than replaced. Adding or removing
// the annotation changes the pre-image, but it must roll nothing by itself,
// so the hook leaves such stamps until a source that counts changes:
//
//   - The stamp is what the sources give now but for one source whose
//     annotation was toggled since (hasher.StoredBeforeIgnoreToggle): kept,
//     on a live change as on a re-check.
//   - On a re-check (the start-up replay, a template write), a workload
//     that reads an ignored source is kept too: an ignored source whose
//     content changed after the annotation was added leaves a stamp that
//     cannot be told from one whose counted sources changed while no one
//     was looking, and its changes must never roll anyone. A live change
//     to a source that counts re-stamps it.
//
// Telling a toggle costs one hash of the whole pre-image per source tried,
// so the sources whose toggle this replica saw go first (toggles), then
// those ignored now, and maxToggleBytes bounds the rest. A stamp not
// explained within the bound is treated as stale: only a workload whose
// sources' content runs to hundreds of thousands of keys can reach it, and
// only for a toggle this replica did not see.
func (r *reconciler) keepAcrossIgnore(ctx context.Context, req Request, refs []hasher.Reference, lookup hasher.Lookup, stored string) (bool, error) {
	res, err := hasher.StoredBeforeIgnoreToggle(r.key, req.Namespace, refs, lookup, stored,
		hasher.ToggleCheck{Toggled: r.toggles.seen(req.Namespace), MaxBytes: maxToggleBytes})
	if err != nil {
		return false, fmt.Errorf("checking for an ignore toggle: %w", err)
	}
	if res.Exhausted {
		log.FromContext(ctx).Info("stamp differs; its sources are too large to check every one for an ignore toggle",
			"sourcesTried", res.Tried)
	}
	if res.Kept {
		r.metrics.kept(req.KindName, keptIgnoreToggled)
		log.FromContext(ctx).Info("stamp differs only because a source's ignore annotation was added or removed; keeping it")
		return true, nil
	}
	if !req.Recheck {
		return false, nil
	}
	reads, err := hasher.ReadsIgnored(refs, lookup)
	if err != nil {
		return false, fmt.Errorf("checking for ignored sources: %w", err)
	}
	if reads {
		r.metrics.kept(req.KindName, keptIgnoredSource)
		log.FromContext(ctx).Info("stamp differs and the workload reads an ignored source; keeping it until a source that counts changes")
	}
	return reads, nil
}
