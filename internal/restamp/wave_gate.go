package restamp

import (
	"context"
	"maps"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/confighash/confighash/hasher"
	"github.com/confighash/confighash/internal/contract"
	"github.com/confighash/confighash/internal/health"
	"github.com/confighash/confighash/internal/sources"
	"github.com/confighash/confighash/internal/waves"
	"github.com/confighash/confighash/internal/workload"
)

// waitRecheck is how long a reader waiting for its wave or for the bound
// sleeps at most; the planner wakes it as soon as it may go, so this only
// covers a wake that was lost.
const waitRecheck = 30 * time.Second

// identity is the planner's name for a request: the workload, whatever
// brought it.
func identity(r Request) Request {
	r.Recheck = false
	return r
}

// contentIDs returns a keyed digest of each source refs read, whole, as the
// cache holds it now: what tells one content of a source from another in
// contract.Change. It reveals nothing of the content.
func (r *reconciler) contentIDs(namespace string, refs []hasher.Reference, lookup hasher.Lookup) (map[string]string, error) {
	return waves.ContentIDs(r.key, namespace, refs, lookup)
}

// changedSources says which of a stale reader's sources changed since its
// last re-stamp: those whose content differs from its verified rollout
// record (rec, from rolloutRecord; nil: none), when it has one; else those
// its pending changes name; else (a replay of a reader never re-stamped)
// all of them.
func changedSources(rec *contract.Rollout, ids map[string]string, named []string) []string {
	var changed []string
	if rec != nil && len(rec.Read) > 0 {
		for src, id := range ids {
			if !slices.Contains(rec.Read, contract.Change{Source: src, Content: id}) {
				changed = append(changed, src)
			}
		}
	} else {
		for _, src := range named {
			if _, ok := ids[src]; ok {
				changed = append(changed, src)
			}
		}
		if len(changed) == 0 {
			for src := range ids {
				changed = append(changed, src)
			}
		}
	}
	slices.Sort(changed)
	return changed
}

// lastRollout is obj's verified rollout record, nil when it has none.
func (r *reconciler) lastRollout(ctx context.Context, kindName string, obj client.Object) *contract.Rollout {
	if rec, ok := r.rolloutRecord(ctx, kindName, obj); ok {
		return &rec
	}
	return nil
}

// wavesOff reports whether obj asks for today's behaviour: re-stamped at
// once, no wave and no halt.
func wavesOff(obj client.Object) bool {
	return waves.Off(obj.GetAnnotations())
}

// gated is the wave gate's answer for a stale reader: go (re-stamp it
// now, in flight, nil when no wave waits for it, writing record, nil: none),
// or wait, with the result to return.
type gated struct {
	ok     bool
	flight *flight
	wait   reconcile.Result
	record *contract.Rollout
	// window: it waits for a window or a freeze (wave_window.go).
	window bool
}

// gate is the wave gate: may s, whose stamp is stale, be re-stamped now
// to s.fresh? named are the changes pending for it.
func (r *reconciler) gate(ctx context.Context, s staleReader, named []string) (gated, error) {
	req, obj := s.req, s.obj
	if r.planner == nil {
		if len(named) == 0 {
			named = sourceNames(s.refs)
		}
		if wait, closed := r.windowGate(ctx, req, obj, s.namespace, named); closed {
			return gated{wait: wait, window: true}, nil
		}
		return gated{ok: true}, nil
	}
	ids, err := r.contentIDs(req.Namespace, s.refs, s.lookup)
	if err != nil {
		return gated{}, err
	}
	now := r.now()
	rec := &contract.Rollout{Since: now.UTC().Truncate(time.Second)}
	for _, src := range slices.Sorted(maps.Keys(ids)) {
		rec.Read = append(rec.Read, contract.Change{Source: src, Content: ids[src]})
	}
	changed := changedSources(r.lastRollout(ctx, req.KindName, obj), ids, named)
	for _, src := range changed {
		rec.Changes = append(rec.Changes, contract.Change{Source: src, Content: ids[src]})
	}
	if wait, closed := r.windowGate(ctx, req, obj, s.namespace, changed); closed {
		return gated{wait: wait, window: true}, nil
	}
	if wavesOff(obj) {
		return gated{ok: true, record: rec}, nil
	}
	var plans []*plan
	for _, c := range rec.Changes {
		key := planKey{namespace: req.Namespace, source: c.Source}
		if r.sourceWavesOff(ctx, req.Namespace, c.Source) {
			// Every reader at once: a halt of this source's plan holds
			// nothing back any more.
			r.planner.drop(key)
			continue
		}
		pl, ok := r.planner.current(key, c)
		if !ok {
			if pl, err = r.buildPlan(ctx, key, c); err != nil {
				return gated{}, err
			}
		}
		plans = append(plans, pl)
	}
	if len(plans) == 0 {
		return gated{ok: true, record: rec}, nil
	}
	kind, _ := r.kinds.get(req.KindName)
	_, light := health.NothingToRun(kind, obj)
	var before health.Verdict
	failing := false
	if _, rolling := r.planner.inFlight(identity(req)); !light && !rolling {
		// A reader already rolling is judged on that rollout, whose
		// failure is the change's doing.
		before, failing = r.failingBefore(ctx, kind, obj)
	}
	// A reader failing before the change takes no slot, as one that
	// starts no pod: its rollout is not judged, so nothing would end it.
	v, by, f := r.planner.admit(identity(req), req, plans, s.fresh, now, light || failing)
	logger := log.FromContext(ctx)
	switch v {
	case admitted:
		// Said once per re-stamp, not on each look while it waits.
		if _, err := waves.OrderOf(obj.GetAnnotations()); err != nil {
			r.events.Eventf(obj, nil, corev1.EventTypeWarning, contract.ReasonInvalidAnnotation, "Restamp", "%s; it goes as 0", err.Error())
		}
		if f != nil {
			// A re-stamp of a reader in flight keeps the first one's
			// clock, and so does a new leader that reads the record.
			rec.Since = f.since.UTC().Truncate(time.Second)
		}
		if failing {
			r.notJudged(req, obj, f, rec, before)
			return gated{ok: true, record: rec}, nil
		}
		return gated{ok: true, flight: f, record: rec}, nil
	case waitHalt:
		// Woken when the halt is released; the source's next change
		// brings it back too. The requeue covers a lost wake.
		logger.V(1).Info("change halted; keeping the stamp", "change", by.change.String())
		return gated{wait: reconcile.Result{RequeueAfter: waitRecheck}}, nil
	case waitWave:
		logger.V(1).Info("waiting for an earlier wave", "change", by.change.String())
	case waitBound:
		logger.V(1).Info("waiting for --max-concurrent-rollouts")
	}
	return gated{wait: reconcile.Result{RequeueAfter: waitRecheck}}, nil
}

// sourceNames names each source refs read, once, as "configmap/NAME".
func sourceNames(refs []hasher.Reference) []string {
	var names []string
	for _, ref := range refs {
		if name := ref.Source.String(); !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names
}

// sourceWavesOff reports whether the source (as "configmap/NAME") asks for
// all its readers at once.
func (r *reconciler) sourceWavesOff(ctx context.Context, namespace, source string) bool {
	src, err := hasher.ParseSource(source)
	if err != nil {
		return false
	}
	obj, err := sources.NewObject(src.Kind)
	if err != nil || r.client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: src.Name}, obj) != nil {
		return false
	}
	return wavesOff(obj)
}

// buildPlan finds the members of a change: the readers of its source that
// it concerns (stale for it, or re-stamped for it already, as their
// contract.RolloutAnnotation says), with their place in the order and any
// halt their metadata records; and installs the plan. Whether a reader is
// stale costs a checksum and a content ID per source it reads, so only the
// first planChecks candidates in the waves' order are checked; the others
// are members unchecked, each checked by its own reconcile when it comes
// (and settled there if current), so that one plan's work does not grow
// with the readers a tenant makes.
func (r *reconciler) buildPlan(ctx context.Context, key planKey, c contract.Change) (*plan, error) {
	src, err := hasher.ParseSource(c.Source)
	if err != nil {
		return nil, err
	}
	var ms []member
	// obsolete are the readers whose halt names an earlier content of the
	// source, with that halt.
	type haltedObject struct {
		kind string
		obj  client.Object
		halt contract.Halt
	}
	var obsolete []haltedObject
	var cands []candidate
	err = listReaders(ctx, r.readers, r.kinds, key.namespace, src, func(k workload.Kind, o client.Object) {
		reads := workload.ReadsOf(k, o)
		if reads.Skip != workload.NotSkipped || wavesOff(o) || o.GetDeletionTimestamp() != nil {
			return
		}
		m := member{req: Request{KindName: k.Name(), NamespacedName: client.ObjectKeyFromObject(o)}}
		m.order, _ = waves.OrderOf(o.GetAnnotations())
		halt := r.haltOf(ctx, k.Name(), o)
		switch {
		case halt.Stops(c):
			m.halted, m.reason = true, halt.Record.Reason
		case halt.Names(c.Source):
			obsolete = append(obsolete, haltedObject{k.Name(), o.DeepCopyObject().(client.Object), halt.Record})
		}
		last := r.lastRollout(ctx, k.Name(), o)
		if last != nil && last.Has(c) {
			m.gone, m.since = true, last.Since
			// Released by hand, or re-stamped while failing (not judged):
			// it counts as done.
			m.released = halt.State == waves.HaltReleased || last.Failing != ""
			ms = append(ms, m)
			return
		}
		if m.halted {
			ms = append(ms, m)
			return
		}
		pending := r.changes.since(m.req)
		if reads.Template.Checksum() == "" && len(pending) == 0 {
			// Never stamped and no change seen live: left alone until
			// its config changes (a replay never stamps it), so it would
			// never ask for its wave.
			return
		}
		if r.flaps != nil && r.flaps.holding(keyOf(m.req)) {
			// Held: it takes the content when its hold ends, by itself.
			return
		}
		cands = append(cands, candidate{m: m, kind: k, obj: o, reads: reads, pending: pending, last: last})
	})
	slices.SortFunc(cands, func(a, b candidate) int {
		return waves.Compare(memberOf(a.m.req, a.m.order), memberOf(b.m.req, b.m.order))
	})
	lookup := sources.Reader{Cache: r.client}.Lookup(ctx, key.namespace)
	checks := planChecks(r.planner.maxWave())
	closed := r.windowClosed(ctx, key.namespace, c.Source)
	for _, cd := range cands {
		cd.m.later = closed(cd.obj)
		if _, light := health.NothingToRun(cd.kind, cd.obj); light {
			// It starts no pod: no canary (its rollout says nothing of the
			// change's health), and holding its stamp back protects
			// nothing, since a pod it starts later reads the config as it
			// is then. Not a member: it goes at once (admit finds it due).
			// Telling so reads its spec and status only: no check, past
			// the bound too.
			continue
		}
		if checks == 0 {
			// Its own reconcile tells, when it asks, whether it is stale.
			cd.m.unchecked = true
			ms = append(ms, cd.m)
			continue
		}
		checks--
		if !r.staleFor(key.namespace, c, cd, lookup) {
			continue
		}
		if _, rolling := r.planner.inFlight(cd.m.req); !rolling {
			if _, failing := r.failingBefore(ctx, cd.kind, cd.obj); failing {
				// Failing before the change: not its canary, nor in any
				// wave; it goes at once, not judged (gate).
				continue
			}
		}
		ms = append(ms, cd.m)
	}
	if err != nil {
		// A kind that cannot be listed (a custom kind whose index is not
		// there yet) is left out, as the enqueuer leaves it out: its
		// readers are not members, and go when they ask. The plan is
		// made of the readers found, rather than none at all.
		log.FromContext(ctx).Error(err, "finding the readers of a change; planning with those found", "source", c.Source)
	}
	pl := r.planner.install(key, c, ms, r.now(), r.rollouts.timeout)
	for _, ho := range obsolete {
		// A halt of an earlier content of this source no longer holds
		// anything back: the source changed since (the fix). It goes (its
		// halts of other sources stay, sealed again), so that status does
		// not show it while the reader waits for its wave.
		o, h := ho.obj, ho.halt
		base := client.MergeFrom(o.DeepCopyObject().(client.Object))
		a := o.GetAnnotations()
		h.Changes = slices.DeleteFunc(h.Changes, func(old contract.Change) bool { return old.Source == c.Source })
		if len(h.Changes) == 0 || h.Reason == waves.RolledBack {
			// A rollback's halt goes whole: one source changed since the
			// undo, and the workload goes to the new content.
			delete(a, contract.HaltAnnotation)
		} else {
			a[contract.HaltAnnotation] = r.sealHalt(ho.kind, o, h)
		}
		o.SetAnnotations(a)
		if err := r.client.Patch(ctx, o, base, client.FieldOwner(contract.FieldManager)); err != nil {
			log.FromContext(ctx).Error(err, "removing an obsolete halt", "workload", o.GetName())
		}
	}
	return pl, nil
}

// candidate is a reader of a change that may be stale for it: what
// planning knows of it before any checksum.
type candidate struct {
	m       member
	kind    workload.Kind
	obj     client.Object
	reads   workload.Reads
	pending []string
	// last is its verified rollout record (nil: none).
	last *contract.Rollout
}

// staleFor reports whether cd is stale for c: its stamp is not the fresh
// checksum and c's source is among those that changed for it. A reader
// that cannot be told is counted stale, so that it cannot go outside the
// waves; one missing a required source keeps its stamp until it exists.
func (r *reconciler) staleFor(namespace string, c contract.Change, cd candidate, lookup hasher.Lookup) bool {
	res, err := hasher.Checksum(r.key, namespace, cd.reads.Refs, lookup)
	if err != nil {
		return true
	}
	if res.Checksum == cd.reads.Template.Checksum() || len(res.Missing) > 0 {
		return false
	}
	ids, err := r.contentIDs(namespace, cd.reads.Refs, lookup)
	return err != nil || slices.Contains(changedSources(cd.last, ids, cd.pending), c.Source)
}

// maxPlanChecks caps planChecks whatever --max-wave-size is.
const maxPlanChecks = 64

// planChecks is how many readers of a change planning checks for
// staleness: twice the largest wave covers the waves up to the first of
// that size (1+2+...+max), whose canaries must be readers the change
// concerns; capped at maxPlanChecks.
func planChecks(maxWave int) int {
	return min(2*max(maxWave, 1), maxPlanChecks)
}
