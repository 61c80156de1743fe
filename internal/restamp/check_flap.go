package restamp

import (
	"slices"
	"sync"
	"time"

	"github.com/confighash/confighash/internal/contract"
)

// workloadKey names a workload whatever queued it: a re-check and a config
// change of the same workload are two queue items but one history, or a
// workload would get the limit twice.
type workloadKey struct {
	kind, namespace, name string
}

func keyOf(r Request) workloadKey {
	return workloadKey{kind: r.KindName, namespace: r.Namespace, name: r.Name}
}

// flapEntry is what the guard remembers of one workload.
type flapEntry struct {
	restamps []time.Time // counted, within the window, oldest first
	// stamps are the stamps written within the window, counted or not,
	// oldest first: content that comes back to one of them is a flap.
	stamps []stampAt
	held   bool
	hold   contract.Hold // while held: what the annotation carries
	// lastSeen is the checksum the sources gave at the last look during a
	// hold, and lastChange when it was last seen to change.
	lastSeen   string
	lastChange time.Time
	// releasedAt and releasedSince are when the last hold ended and when it
	// had begun; level is its backoff level.
	releasedAt    time.Time
	releasedSince time.Time
	level         int
	touched       time.Time
}

// flapGuard holds workloads whose sources flap (a certificate rewritten in
// a loop, two controllers fighting over a ConfigMap), so that a flap turns
// into a bounded number of ReplicaSets rather than one per change.
//
// A workload re-stamped FlapLimit times within FlapWindow is held. While
// held it is not re-stamped at all, however long the flapping lasts; once
// its sources have not changed for the quiet time (FlapQuiet) it takes
// their latest content, once. A hold that follows within FlapWindow of the
// end of the last one doubles the quiet time, up to FlapMaxQuiet, so a
// source that flaps in bursts rolls its readers ever more rarely. The hold
// itself is also kept on the workload (contract.HoldAnnotation), which is how a new
// leader honours it.
type flapGuard struct {
	opts Options
	// maxEntries caps how many workloads the guard remembers.
	maxEntries int

	mu        sync.Mutex
	entries   map[workloadKey]*flapEntry
	lastSweep time.Time
}

// newFlapGuard builds a guard from validated options (Options.Validate).
func newFlapGuard(o Options, maxEntries int) *flapGuard {
	return &flapGuard{opts: o, maxEntries: max(maxEntries, 1), entries: map[workloadKey]*flapEntry{}}
}

// flapDecision is what the guard says about one look at a workload.
type flapDecision struct {
	// Hold is set while the workload is held: re-stamp nothing, make sure
	// the workload carries this hold, and look again after Retry.
	Hold  *contract.Hold
	Retry time.Duration
	// Started is true on the look that began the hold.
	Started bool
	// Release is true when a hold ends: drop the annotation (writing the
	// latest stamp with it, if the stamp is stale) and report back with
	// restamped or released.
	Release bool
}

// look is asked each time the hook works out what w's sources give now
// (sum) and whether that differs from w's stamp (stale). stored is the hold
// w carries, nil if none.
func (g *flapGuard) look(w workloadKey, sum string, stale bool, stored *contract.Hold, now time.Time) flapDecision {
	g.mu.Lock()
	defer g.mu.Unlock()
	e := g.entry(w, stale || stored != nil, now)
	if e == nil {
		return flapDecision{}
	}
	if v, ok := g.whileHeld(e, sum, stored, now); ok {
		return v
	}
	if !stale {
		return flapDecision{}
	}
	recentlyHeld := !e.releasedAt.IsZero() && now.Sub(e.releasedAt) < g.opts.FlapWindow
	if len(e.restamps) < g.opts.FlapLimit && !recentlyHeld {
		return flapDecision{}
	}
	level := 0
	if recentlyHeld {
		level = min(e.level+1, g.maxLevel())
	}
	e.held, e.level = true, level
	e.hold = contract.Hold{Since: holdSince(now), Level: level, Quiet: g.quiet(level)}
	e.lastSeen, e.lastChange = sum, now
	h := e.hold
	return flapDecision{Hold: &h, Retry: h.Quiet, Started: true}
}

// held is look's decision for a workload that is held and stays held, asked
// before the caller knows whether its stamp is stale: a held workload is
// not re-stamped whatever the stamp, so the cost of telling a stale stamp
// from one kept on purpose (check_ignored.go) is saved for after the hold. ok is
// false when w is not held or its hold is over; the caller then works out
// stale and asks look.
func (g *flapGuard) held(w workloadKey, sum string, stored *contract.Hold, now time.Time) (v flapDecision, ok bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	e := g.entry(w, stored != nil, now)
	if e == nil {
		return flapDecision{}, false
	}
	v, ok = g.whileHeld(e, sum, stored, now)
	return v, ok && v.Hold != nil
}

// entry is w's entry, touched at now, or nil if there is none and create is
// false. Callers hold mu.
func (g *flapGuard) entry(w workloadKey, create bool, now time.Time) *flapEntry {
	g.sweep(now)
	e := g.entries[w]
	if e == nil {
		if !create {
			return nil
		}
		e = g.add(w, now)
	}
	e.touched = now
	e.restamps = g.recent(e.restamps, now)
	return e
}

// whileHeld is the decision on e if it is held, or is to be held because it
// carries a hold (stored) this guard did not end; ok is false otherwise.
// The decision does not depend on whether the stamp is stale. Callers hold
// mu.
func (g *flapGuard) whileHeld(e *flapEntry, sum string, stored *contract.Hold, now time.Time) (flapDecision, bool) {
	// A hold this guard did not start (a former leader's, or one whose
	// entry was evicted) is honoured. The one just ended is not: a cache
	// that has not yet seen the end still shows it.
	if stored != nil && !e.held && !stored.Since.Equal(e.releasedSince) {
		level := min(stored.Level, g.maxLevel())
		e.held, e.level = true, level
		e.hold = contract.Hold{Since: stored.Since, Level: level, Quiet: g.quiet(level)}
		// When the sources last changed is not known; counting from now
		// can only make the hold longer, never let a flap through.
		e.lastSeen, e.lastChange = sum, now
	}
	if !e.held {
		return flapDecision{}, false
	}
	if sum != e.lastSeen {
		e.lastSeen, e.lastChange = sum, now
	}
	if wait := e.lastChange.Add(e.hold.Quiet).Sub(now); wait > 0 {
		h := e.hold
		return flapDecision{Hold: &h, Retry: wait}, true
	}
	return flapDecision{Release: true}, true
}

// stampAt is one stamp written, and when.
type stampAt struct {
	sum string
	at  time.Time
}

// restamped notes that w was re-stamped at now, counting it towards the
// limit; if it was held, the hold has ended with it.
func (g *flapGuard) restamped(w workloadKey, now time.Time) {
	g.restampedTo(w, now, "", true)
}

// restampedTo notes that w was re-stamped to sum at now. With waves the
// hook knows whether the rollout of w's previous re-stamp was still going
// (rolling); it counts the re-stamp towards the limit only then, or when sum
// is a stamp w had within the window (content that came back): that is a
// machine that flaps (a Secret rewritten every few seconds, two
// controllers fighting), while a person who waits for each rollout before
// the next edit is never held however many edits they make. Without waves
// (rolling is always true) every re-stamp counts, as before.
func (g *flapGuard) restampedTo(w workloadKey, now time.Time, sum string, rolling bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	e := g.entries[w]
	if e == nil {
		e = g.add(w, now)
	}
	e.touched = now
	cutoff := now.Add(-g.opts.FlapWindow)
	e.stamps = slices.DeleteFunc(e.stamps, func(s stampAt) bool { return !s.at.After(cutoff) })
	back := sum != "" && slices.ContainsFunc(e.stamps, func(s stampAt) bool { return s.sum == sum })
	if sum != "" {
		// A bounded memory: a flap between a handful of contents is
		// caught by the last few, and more are counted by rolling anyway.
		e.stamps = append(e.stamps[max(0, len(e.stamps)-maxFlapStamps+1):], stampAt{sum: sum, at: now})
	}
	e.restamps = g.recent(e.restamps, now)
	if rolling || back {
		e.restamps = append(e.restamps, now)
	}
	g.end(e, now)
}

// maxFlapStamps is how many recent stamps a flap entry keeps.
const maxFlapStamps = 8

// released notes that w's hold ended at now without a re-stamp: its
// sources settled on the content it was stamped with.
func (g *flapGuard) released(w workloadKey, now time.Time) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if e := g.entries[w]; e != nil {
		e.touched = now
		g.end(e, now)
	}
}

// holding reports whether w is held.
func (g *flapGuard) holding(w workloadKey) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	e := g.entries[w]
	return e != nil && e.held
}

// end ends e's hold, if any. Callers hold mu.
func (g *flapGuard) end(e *flapEntry, now time.Time) {
	if !e.held {
		return
	}
	e.held = false
	e.releasedAt, e.releasedSince = now, e.hold.Since
}

// quiet is the quiet time at a backoff level.
func (g *flapGuard) quiet(level int) time.Duration {
	q := g.opts.FlapQuiet
	for range level {
		if q >= g.opts.FlapMaxQuiet/2 {
			return g.opts.FlapMaxQuiet
		}
		q *= 2
	}
	return min(q, g.opts.FlapMaxQuiet)
}

// maxLevel is the first level whose quiet time is the cap; higher levels
// would say nothing more.
func (g *flapGuard) maxLevel() int {
	level := 0
	for q := g.opts.FlapQuiet; q > 0 && q < g.opts.FlapMaxQuiet; q *= 2 {
		level++
	}
	return level
}

// recent drops re-stamps older than the window. Callers hold mu.
func (g *flapGuard) recent(h []time.Time, now time.Time) []time.Time {
	i := 0
	for i < len(h) && now.Sub(h[i]) >= g.opts.FlapWindow {
		i++
	}
	return h[i:]
}

// add remembers a new workload, making room first if the guard is full.
// Callers hold mu.
func (g *flapGuard) add(w workloadKey, now time.Time) *flapEntry {
	if len(g.entries) >= g.maxEntries {
		g.lastSweep = time.Time{}
		g.sweep(now)
	}
	if len(g.entries) >= g.maxEntries {
		g.evict()
	}
	e := &flapEntry{touched: now}
	g.entries[w] = e
	return e
}

// sweep forgets, once per window, the workloads with nothing left to
// remember: not held, no re-stamp within the window, and no hold ended
// within it. Callers hold mu.
func (g *flapGuard) sweep(now time.Time) {
	if now.Sub(g.lastSweep) < g.opts.FlapWindow {
		return
	}
	g.lastSweep = now
	for w, e := range g.entries {
		e.restamps = g.recent(e.restamps, now)
		if !e.held && len(e.restamps) == 0 && (e.releasedAt.IsZero() || now.Sub(e.releasedAt) >= g.opts.FlapWindow) {
			delete(g.entries, w)
		}
	}
}

// evict forgets the least recently looked-at tenth of a full guard, so
// that a fan-out over more workloads than the cap costs a sort per tenth
// rather than a scan per workload. A held workload forgotten this way
// is held again on its next look, from its annotation; one with recent
// re-stamps gets a fresh limit, which is the price of the bound. Callers
// hold mu.
func (g *flapGuard) evict() {
	type aged struct {
		w       workloadKey
		touched time.Time
	}
	all := make([]aged, 0, len(g.entries))
	for w, e := range g.entries {
		all = append(all, aged{w, e.touched})
	}
	slices.SortFunc(all, func(a, b aged) int { return a.touched.Compare(b.touched) })
	n := max(len(all)/10, 1)
	for _, a := range all[:n] {
		delete(g.entries, a.w)
	}
}
