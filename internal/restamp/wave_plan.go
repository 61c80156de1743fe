package restamp

import (
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/confighash/confighash/internal/contract"
	"github.com/confighash/confighash/internal/waves"
)

// planKey names the plan of one source's changes in one namespace. There
// is one plan per key at a time: a newer content replaces the plan of the
// older one, whose waiting readers then go straight to the newer content.
type planKey struct {
	namespace string
	source    string
}

// plan is the waves of one change: its readers, in the order the waves take
// them, and how far each has gone.
type plan struct {
	key     planKey
	change  contract.Change
	members []Request // sorted as waves.Plan sorts them
	// index is each member's place in members.
	index map[Request]int
	// gone are the members re-stamped for the change, done those whose
	// rollout succeeded (or was released by hand).
	gone, done map[Request]bool
	// halt is set when a member's rollout failed: the change goes to no
	// further member.
	halt *planHalt
	// finished is when every member had succeeded or settled; zero
	// while the waves go.
	finished time.Time
	// unchecked are the members planning did not check for staleness
	// (beyond planChecks of them, in the waves' order): each is checked by
	// its own reconcile, and settled there if current. The time is when
	// one was last woken for that by a later wave waiting on it; zero:
	// never.
	unchecked map[Request]time.Time
}

// planHalt says which member halted a plan, and why.
type planHalt struct {
	by     Request
	reason string
}

// flight is a reader re-stamped for one or more plans whose rollout is
// being judged; it counts against --max-concurrent-rollouts until it ends.
type flight struct {
	// since is when the reader was first re-stamped while in flight: a
	// re-stamp of a reader in flight does not restart the clock of
	// --rollout-timeout, so re-stamping a rollout that never ends cannot
	// keep its slot for ever.
	since time.Time
	// light: its re-stamp starts no pod; it takes no slot of the bound.
	light bool
	// judged is when its rollout was last looked at (zero: never).
	judged time.Time
	// stamp is the stamp written, which the new revision's pods carry.
	stamp string
	plans []*plan
	// before is what its plans recorded of the reader before the admit
	// that made this flight, which abort puts back.
	before []membership
	// prev is the rollout that was going when this flight was admitted:
	// abort puts it back. nil once this flight's re-stamp is written.
	prev *flight
}

// membership is what one plan records of one reader.
type membership struct {
	pl         *plan
	gone, done bool
}

// restore puts m back into its plan for r.
func (m membership) restore(r Request) {
	setOrDelete(m.pl.gone, r, m.gone)
	setOrDelete(m.pl.done, r, m.done)
}

func setOrDelete(set map[Request]bool, r Request, on bool) {
	if on {
		set[r] = true
	} else {
		delete(set, r)
	}
}

// planner keeps the waves of every change in progress. It is the leader's
// memory only: everything in it can be rebuilt from the objects (the
// readers' contract.RolloutAnnotation and contract.HaltAnnotation), which is
// what a new leader does as the start-up replay brings each reader back.
type planner struct {
	mu sync.Mutex
	// maxWave is the largest wave (--max-wave-size, >= 1); maxInFlight the
	// bound on rollouts in progress (--max-concurrent-rollouts, 0: none).
	maxWave, maxInFlight int
	plans                map[planKey]*plan
	flights              map[Request]*flight
	// blocked are readers whose wave is due but who wait for a slot of the
	// bound, shared fairly across namespaces (wave_fair.go).
	blocked *slotWaiters
	// waiting maps each reader told to wait to the request it came with,
	// which is the one to wake: its pending changes are kept under it.
	waiting map[Request]Request
	// judged remembers, for each reader whose rollout was judged to an end,
	// when that rollout began: a plan rebuilt later (a late member, a
	// revert) does not judge it again. Entries older than the rollout
	// timeout are dropped as plans are built.
	judged map[Request]time.Time
	// later holds wakes decided under mu, sent once it is released.
	later []Request
	// now is the clock (time.Now unless a test sets it).
	now func() time.Time
	// wake queues a reader again; called without mu held.
	wake func(Request)
}

func newPlanner(maxWave, maxInFlight int, wake func(Request)) *planner {
	return &planner{maxWave: maxWave, maxInFlight: maxInFlight, plans: map[planKey]*plan{},
		flights: map[Request]*flight{}, blocked: newSlotWaiters(), waiting: map[Request]Request{}, judged: map[Request]time.Time{}, wake: wake, now: time.Now}
}

// member is a reader of a change as the plan is built: its place in the
// order, and what its own metadata says it has gone through.
type member struct {
	req   Request
	order int
	// gone: its contract.RolloutAnnotation names the change; halted: its
	// contract.HaltAnnotation does; released: a user released that halt.
	gone, halted, released bool
	// since is when it was re-stamped for the change (from the annotation).
	since  time.Time
	reason string
	// unchecked: planning did not check whether it is stale for the
	// change (plan.unchecked).
	unchecked bool
}

// current returns the plan of key if it is for change.
func (p *planner) current(key planKey, change contract.Change) (*plan, bool) {
	if p == nil {
		return nil, false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	pl, ok := p.plans[key]
	return pl, ok && pl.change == change
}

// install makes the plan of key the one for change, from its members as
// their objects show them, unless a plan for change is there already. Gone
// members not known to be in flight are put in flight, and woken, so that
// a new leader judges their rollout; but only those re-stamped within
// --rollout-timeout (timeout; 0: all): an older one has long ended, and
// whatever it does now is not this change's doing. A record's time later
// than now counts as now, and a rebuilt flight takes a slot of the bound as
// an admitted one does: one that finds none counts as ended, so that no
// record, valid or not, puts readers in flight past the bound or past the
// timeout.
func (p *planner) install(key planKey, change contract.Change, ms []member, now time.Time, timeout time.Duration) *plan {
	if p == nil {
		return nil
	}
	p.mu.Lock()
	if pl, ok := p.plans[key]; ok && pl.change == change {
		p.mu.Unlock()
		return pl
	}
	var judge []Request
	slices.SortFunc(ms, func(a, b member) int {
		return waves.Compare(memberOf(a.req, a.order), memberOf(b.req, b.order))
	})
	pl := &plan{key: key, change: change, gone: map[Request]bool{}, done: map[Request]bool{}, index: map[Request]int{}, unchecked: map[Request]time.Time{}}
	for _, m := range ms {
		pl.index[m.req] = len(pl.members)
		pl.members = append(pl.members, m.req)
		if m.since.After(now) {
			m.since = now
		}
		switch {
		case m.released:
			pl.gone[m.req], pl.done[m.req] = true, true
		case m.halted:
			pl.gone[m.req] = true
			if pl.halt == nil {
				pl.halt = &planHalt{by: m.req, reason: m.reason}
			}
		case m.gone && (timeout > 0 && now.Sub(m.since) > timeout || !p.judged[m.req].Before(m.since)):
			// Long over, or judged already by this leader.
			pl.gone[m.req], pl.done[m.req] = true, true
		case m.gone && p.flights[m.req] == nil && !p.slotFor(m.req, now):
			// No slot: what a leader keeping the bound never left.
			pl.gone[m.req], pl.done[m.req] = true, true
		case m.gone:
			pl.gone[m.req] = true
			f := p.flights[m.req]
			if f == nil {
				f = &flight{since: m.since}
				p.flights[m.req] = f
				judge = append(judge, m.req)
			}
			f.plans = append(f.plans, pl)
		case m.unchecked:
			pl.unchecked[m.req] = time.Time{}
		}
	}
	p.plans[key] = pl
	keep := timeout
	if keep <= 0 {
		keep = DefaultOptions().RolloutTimeout
	}
	for r, since := range p.judged {
		if now.Sub(since) > keep {
			delete(p.judged, r)
		}
	}
	for k, old := range p.plans {
		if !old.finished.IsZero() && now.Sub(old.finished) > keep {
			delete(p.plans, k)
		}
	}
	p.mu.Unlock()
	p.wakeAll(judge)
	return pl
}

func memberOf(r Request, order int) waves.Member {
	return waves.Member{KindName: r.KindName, Namespace: r.Namespace, Name: r.Name, Order: order}
}

// verdict is the planner's answer to a reader that is due a re-stamp.
type verdict int

const (
	// admitted: re-stamp it now; it is in flight from now on.
	admitted verdict = iota
	// waitWave: an earlier wave of one of its plans has not succeeded yet.
	waitWave
	// waitBound: its waves are due, but --max-concurrent-rollouts are in
	// progress.
	waitBound
	// waitHalt: one of its plans is halted.
	waitHalt
)

// admit asks whether r (identity(req)) may be re-stamped now for plans,
// and if so puts it in flight for all of them, with stamp, and returns
// that flight: the caller reports its write (written) or its failure
// (abort) for exactly this flight, since two requests of one workload (a
// change and a re-check) can be admitted at the same time. A reader waiting
// on a halted plan holds up none of its other plans: re-stamping it for
// them would take it to the halted content too, so it waits, but settled
// there. light says the re-stamp starts no pod (rollout.NothingToRun), so
// it takes no slot of --max-concurrent-rollouts: it can cause no storm, and
// its flight ends as soon as it is written. Any other re-stamp needs a slot
// (slotFor), a reader in flight already included.
func (p *planner) admit(r, req Request, plans []*plan, stamp string, now time.Time, light bool) (verdict, *plan, *flight) {
	if p == nil {
		return admitted, nil, nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, pl := range plans {
		// It asks: its own reconcile found it stale.
		delete(pl.unchecked, r)
	}
	// Halted: the change goes to no further reader. The reader that halted
	// another change is not held back from this one: it runs that content
	// already, and if its pods still fail, the gate re-stamps it unjudged
	// (wave_before.go), so it halts nothing more.
	var halted *plan
	for _, pl := range plans {
		if pl.halt != nil {
			halted = pl
			break
		}
	}
	if halted != nil {
		p.blocked.remove(r)
		p.wait(r, req)
		var next []Request
		for _, other := range plans {
			if other.halt == nil && !other.gone[r] && !other.done[r] {
				// Settled there: it holds up none of their waves.
				other.done[r] = true
				next = append(next, other.dueMembers(p.maxWave, p.waiting)...)
			}
		}
		p.wakeLater(next)
		return waitHalt, halted, nil
	}
	for _, pl := range plans {
		if !pl.due(r, p.maxWave) {
			p.blocked.remove(r)
			p.wait(r, req)
			p.wakeLater(p.unjudged(pl, now))
			p.wakeLater(pl.uncheckedBefore(r, p.maxWave, p.waiting, now))
			return waitWave, pl, nil
		}
	}
	if !light && !p.slotFor(r, now) {
		p.blocked.add(r)
		p.wait(r, req)
		return waitBound, nil, nil
	}
	p.blocked.remove(r)
	delete(p.waiting, r)
	f := &flight{since: now, light: light, stamp: stamp, plans: slices.Clone(plans)}
	if old := p.flights[r]; old != nil {
		// Re-stamped again while the last rollout was going. Its plans that
		// are still current (another source's change, whose wave waits on
		// r) stay with the new flight: one verdict, on the new stamp,
		// decides them all, since the new pods carry both changes. A
		// superseded plan is done with r. The clock goes on from the first
		// re-stamp.
		for _, pl := range old.plans {
			switch {
			case slices.Contains(f.plans, pl):
			case p.isCurrent(pl):
				f.plans = append(f.plans, pl)
			default:
				pl.done[r] = true
			}
		}
		if old.since.Before(f.since) {
			f.since = old.since
		}
		f.prev = old
	}
	p.flights[r] = f
	for _, pl := range plans {
		f.before = append(f.before, membership{pl: pl, gone: pl.gone[r], done: pl.done[r]})
		pl.gone[r] = true
		delete(pl.done, r)
	}
	return admitted, nil, f
}

// has reports whether r is a member of pl.
func (pl *plan) has(r Request) bool {
	_, ok := pl.index[r]
	return ok
}

// due reports whether r's wave may go: every member of every earlier wave
// has succeeded. A reader that is not a member (it began to read the source
// after the plan was made) is due at once.
func (pl *plan) due(r Request, maxWave int) bool {
	for _, m := range pl.members[:pl.waveStart(r, maxWave)] {
		if !pl.done[m] {
			return false
		}
	}
	return true
}

// waveStart is the index in members of the first member of r's wave (0
// for a reader that is not a member).
func (pl *plan) waveStart(r Request, maxWave int) int {
	i, ok := pl.index[r]
	if !ok {
		return 0
	}
	start := 0
	for _, size := range waves.Sizes(i+1, maxWave) {
		if start+size > i {
			break
		}
		start += size
	}
	return start
}

// uncheckedBefore lists, as re-checks, the members of the waves before r's
// that planning did not check and that have not asked (waiting), at most
// once per staleJudgement each: r waits on them, and their own reconcile
// settles one that is current. Callers hold mu.
func (pl *plan) uncheckedBefore(r Request, maxWave int, waiting map[Request]Request, now time.Time) []Request {
	if len(pl.unchecked) == 0 {
		return nil
	}
	var rs []Request
	for _, m := range pl.members[:pl.waveStart(r, maxWave)] {
		last, ok := pl.unchecked[m]
		if _, asked := waiting[m]; !ok || asked || pl.gone[m] || pl.done[m] || (!last.IsZero() && now.Sub(last) <= staleJudgement) {
			continue
		}
		pl.unchecked[m] = now
		m.Recheck = true
		rs = append(rs, m)
	}
	return rs
}

// abort takes r out of flight f after a re-stamp that was admitted but not
// written, so that it waits again: each of f's plans records r as it did
// before the admit, and the rollout f replaced, if any, goes on. A flight
// another admit has replaced since is only taken out of that one's way
// back.
func (p *planner) abort(r Request, f *flight) {
	if p == nil || f == nil {
		return
	}
	p.mu.Lock()
	cur := p.flights[r]
	if cur != f {
		for g := cur; g != nil; g = g.prev {
			if g.prev == f {
				// g was admitted over f: what it would put back is what
				// was there before f.
				g.prev = f.prev
				for i, m := range g.before {
					for _, fm := range f.before {
						if fm.pl == m.pl {
							g.before[i] = fm
						}
					}
				}
				break
			}
		}
		p.mu.Unlock()
		return
	}
	for _, m := range f.before {
		m.restore(r)
	}
	if f.prev != nil {
		// The rollout that was going goes on: it is still to be judged.
		p.flights[r] = f.prev
	} else {
		delete(p.flights, r)
	}
	p.mu.Unlock()
	p.wakeBlocked()
}

// written says f's re-stamp was written: the flight it replaced is over.
func (p *planner) written(f *flight) {
	if p == nil || f == nil {
		return
	}
	p.mu.Lock()
	f.prev = nil
	p.mu.Unlock()
}

// inFlight returns r's flight, if its rollout is being judged.
func (p *planner) inFlight(r Request) (*flight, bool) {
	if p == nil {
		return nil, false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	f, ok := p.flights[r]
	return f, ok
}

// succeeded ends r's flight, whichever it is: its plans' next waves may go.
func (p *planner) succeeded(r Request) { p.succeededFlight(r, nil) }

// succeededFlight ends r's flight judged succeeded, if it is still only (a
// nil only: whichever it is): a verdict on a flight that a newer re-stamp
// replaced meanwhile (two requests of one workload run at once) ends
// nothing.
func (p *planner) succeededFlight(r Request, only *flight) {
	if p == nil {
		return
	}
	p.mu.Lock()
	next := p.endSucceeded(r, only)
	p.mu.Unlock()
	p.wakeAll(next)
	p.wakeBlocked()
}

// endSucceeded is succeededFlight's work, returning the readers to wake.
// Callers hold mu.
func (p *planner) endSucceeded(r Request, only *flight) []Request {
	f, ok := p.flights[r]
	if !ok || only != nil && f != only {
		return nil
	}
	delete(p.flights, r)
	p.judged[r] = f.since
	var next []Request
	for _, pl := range f.plans {
		pl.done[r] = true
		next = append(next, pl.dueMembers(p.maxWave, p.waiting)...)
		p.forgetIfDone(pl)
	}
	return next
}

// forgetIfDone drops pl once every member has succeeded, so that the
// planner holds only changes in progress or halted. A member that asks
// later rebuilds it from the objects. Callers hold mu.
func (p *planner) forgetIfDone(pl *plan) {
	if len(pl.done) < len(pl.members) || p.plans[pl.key] != pl {
		return
	}
	for _, m := range pl.members {
		if !pl.done[m] {
			return
		}
	}
	// Kept as finished until --rollout-timeout has passed (install drops
	// it then), not dropped at once: a member that asks later (its hold
	// ended) finds its wave due, where a plan rebuilt from the objects
	// would count as members readers that settled already and never ask.
	if pl.finished.IsZero() {
		pl.finished = p.now()
	}
}

// wait remembers req as the request to wake r with: a live change wins
// over a re-check, since its pending changes (and their names, for the
// Event) are kept under it. Callers hold mu.
func (p *planner) wait(r, req Request) {
	if old, ok := p.waiting[r]; !ok || old.Recheck {
		p.waiting[r] = req
	}
}

// settled says r, a member not re-stamped, needs no re-stamp for its plans
// any more: deleted, opted out, no longer served, or current (the webhook
// stamped a template change of it with the new content). It counts as done,
// so that it holds up no later wave.
func (p *planner) settled(r Request) {
	if p == nil {
		return
	}
	p.mu.Lock()
	next := p.settle(r)
	p.mu.Unlock()
	p.wakeAll(next)
	// A slot kept for it, if any, goes to another waiter.
	p.wakeBlocked()
}

// settledRecheck is settled for a re-check that leaves r alone because it
// has no stamp: unless a live change of r waits in a wave, for which r
// still needs its re-stamp.
func (p *planner) settledRecheck(req Request) {
	if p == nil {
		return
	}
	r := identity(req)
	p.mu.Lock()
	if w, ok := p.waiting[r]; ok && w != req {
		p.mu.Unlock()
		return
	}
	next := p.settle(r)
	p.mu.Unlock()
	p.wakeAll(next)
	p.wakeBlocked()
}

// settle is settled's work, returning the readers to wake. Callers hold mu.
func (p *planner) settle(r Request) []Request {
	var next []Request
	for _, pl := range p.plans {
		delete(pl.unchecked, r)
		if pl.has(r) && !pl.gone[r] && !pl.done[r] {
			pl.done[r] = true
			next = append(next, pl.dueMembers(p.maxWave, p.waiting)...)
			p.forgetIfDone(pl)
		}
	}
	delete(p.waiting, r)
	p.blocked.remove(r)
	return next
}

// adopt puts r in flight for the current plans it is a member of and has
// not gone in, with stamp: its stamp went to the new content without the
// hook (the webhook stamped a template change of it), so its rollout is
// judged as if the hook had re-stamped it, and the next wave waits for it.
// It reports whether r was such a member. A member planning did not check
// is not adopted (it may never have been stale: its reconcile settles it),
// nor is one that finds no slot of the bound (it is settled too: its
// rollout is its own template change's).
func (p *planner) adopt(r Request, stamp string, now time.Time) bool {
	if p == nil {
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	var plans []*plan
	for _, pl := range p.plans {
		_, unchecked := pl.unchecked[r]
		if pl.has(r) && !pl.gone[r] && !pl.done[r] && pl.halt == nil && !unchecked {
			plans = append(plans, pl)
		}
	}
	f := p.flights[r]
	if len(plans) == 0 || f == nil && !p.slotFor(r, now) {
		return false
	}
	for _, pl := range plans {
		pl.gone[r] = true
	}
	delete(p.waiting, r)
	p.blocked.remove(r)
	if f != nil {
		f.plans = append(f.plans, plans...)
		return true
	}
	p.flights[r] = &flight{since: now, stamp: stamp, plans: plans}
	return true
}

// haltsBy returns the changes of the current plans that r halts, so that
// a halt whose record could not be written (or was removed by a sync)
// is written again while this leader remembers it.
func (p *planner) haltsBy(r Request) ([]contract.Change, string) {
	if p == nil {
		return nil, ""
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	var cs []contract.Change
	reason := ""
	for _, pl := range p.plans {
		if pl.halt != nil && pl.halt.by == r {
			cs = append(cs, pl.change)
			reason = pl.halt.reason
		}
	}
	slices.SortFunc(cs, func(a, b contract.Change) int { return strings.Compare(a.String(), b.String()) })
	return cs, reason
}

// deleted forgets r, a reader that no longer exists: its flight ends, a
// halt it caused is lifted, as a new leader would find no record of it, and
// it holds up no wave.
func (p *planner) deleted(r Request) {
	if p == nil {
		return
	}
	p.mu.Lock()
	next := p.lift(r)
	next = append(next, p.endSucceeded(r, nil)...)
	next = append(next, p.settle(r)...)
	p.mu.Unlock()
	p.wakeAll(next)
	p.wakeBlocked()
}

// release ends a halt by hand: r counts as succeeded in the plans it
// halted. A rollout of r in flight now is another one (the halting one
// ended as it failed), and is judged on its own.
func (p *planner) release(r Request) {
	if p == nil {
		return
	}
	p.mu.Lock()
	next := p.lift(r)
	p.mu.Unlock()
	p.wakeAll(next)
}

// lift lifts the halts r caused, returning the readers to wake. Callers
// hold mu.
func (p *planner) lift(r Request) []Request {
	var next []Request
	for _, pl := range p.plans {
		if pl.halt != nil && pl.halt.by == r {
			pl.halt = nil
			pl.done[r] = true
			next = append(next, pl.dueMembers(p.maxWave, p.waiting)...)
			p.forgetIfDone(pl)
		}
	}
	return next
}

// failed ends r's flight and halts its plans that are still current (a
// superseded one halts nothing). It returns the plans it halted.
func (p *planner) failed(r Request, reason string) []*plan { return p.failedFlight(r, reason, nil) }

// failedFlight is failed for the flight judged, as succeededFlight.
func (p *planner) failedFlight(r Request, reason string, only *flight) []*plan {
	if p == nil {
		return nil
	}
	p.mu.Lock()
	f, ok := p.flights[r]
	if ok && only != nil && f != only {
		p.mu.Unlock()
		return nil
	}
	delete(p.flights, r)
	var halted []*plan
	if ok {
		p.judged[r] = f.since
		for _, pl := range f.plans {
			if p.isCurrent(pl) && pl.halt == nil {
				pl.halt = &planHalt{by: r, reason: reason}
				halted = append(halted, pl)
			}
		}
	}
	p.mu.Unlock()
	p.wakeBlocked()
	return halted
}

// isCurrent reports whether pl is still its key's plan. Callers hold mu.
func (p *planner) isCurrent(pl *plan) bool {
	return p.plans[pl.key] == pl
}

// dueMembers lists the members not gone nor settled whose wave may go
// now, of those that asked and were told to wait (waiting): a member that
// has not asked yet comes with its own event, and waking it would turn
// what may be a replay into a live change. Callers hold mu.
func (pl *plan) dueMembers(maxWave int, waiting map[Request]Request) []Request {
	if pl.halt != nil {
		return nil
	}
	var due []Request
	for _, m := range pl.members {
		if _, asked := waiting[m]; asked && !pl.gone[m] && !pl.done[m] && pl.due(m, maxWave) {
			due = append(due, m)
		}
	}
	return due
}

// counts returns the rollouts in flight and the current plans halted, for
// the gauges.
func (p *planner) counts() (inFlight, halted int) {
	if p == nil {
		return 0, 0
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, pl := range p.plans {
		if pl.halt != nil {
			halted++
		}
	}
	return len(p.flights), halted
}

// wakeBlocked wakes as many readers waiting for the bound as there are
// free slots (all, without a bound), fairly across namespaces
// (nextWaiters), and any wakes decided under mu.
func (p *planner) wakeBlocked() {
	if p == nil {
		return
	}
	p.mu.Lock()
	rs := p.nextWaiters(p.now())
	rs = append(rs, p.later...)
	p.later = nil
	p.mu.Unlock()
	p.wakeAll(rs)
}

// drop forgets the plan of key: its source's readers go at once now
// (contract.WavesAnnotation on the source), so its halt, if any, holds
// nothing back.
func (p *planner) drop(key planKey) {
	if p == nil {
		return
	}
	p.mu.Lock()
	delete(p.plans, key)
	p.mu.Unlock()
}

// unjudged lists pl's members in flight whose rollout has not been looked
// at for a while (a wake that was lost, say): a reader that waits for them
// wakes them, so that no wave waits on a rollout nobody judges. Callers
// hold mu.
func (p *planner) unjudged(pl *plan, now time.Time) []Request {
	var rs []Request
	for _, m := range pl.members {
		f, ok := p.flights[m]
		if !ok {
			continue
		}
		last := f.since
		if f.judged.After(last) {
			last = f.judged
		}
		if now.Sub(last) > staleJudgement {
			f.judged = now // one wake per while
			rs = append(rs, m)
		}
	}
	return rs
}

// staleJudgement is how long a rollout in flight may go unjudged before a
// waiting reader wakes it: several of its polls.
const staleJudgement = 5 * rolloutPoll

// looked notes that r's rollout was judged at now.
func (p *planner) looked(r Request, now time.Time) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if f, ok := p.flights[r]; ok {
		f.judged = now
	}
}

// wakeLater queues wakes decided under mu; flushLater (or wakeBlocked)
// sends them. Callers hold mu.
func (p *planner) wakeLater(rs []Request) {
	p.later = append(p.later, rs...)
}

// flushLater sends the wakes wakeLater queued, and no other.
func (p *planner) flushLater() {
	if p == nil {
		return
	}
	p.mu.Lock()
	rs := p.later
	p.later = nil
	p.mu.Unlock()
	p.wakeAll(rs)
}

// wakeAll queues rs again, each with the request it waited with.
func (p *planner) wakeAll(rs []Request) {
	if p == nil || p.wake == nil || len(rs) == 0 {
		return
	}
	p.mu.Lock()
	reqs := make([]Request, len(rs))
	for i, r := range rs {
		reqs[i] = r
		if req, ok := p.waiting[r]; ok {
			reqs[i] = req
		}
	}
	p.mu.Unlock()
	for _, r := range reqs {
		p.wake(r)
	}
}
