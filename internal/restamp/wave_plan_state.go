package restamp

import (
	"slices"
	"strings"
	"time"

	"github.com/confighash/confighash/internal/contract"
	"github.com/confighash/confighash/internal/waves"
)

// planState is the waves of every change in progress, as a plain state
// machine: each method is one event (a change planned, a reader admitted,
// written, succeeded, failed, settled, deleted, released...), changes the
// state and returns the readers the event lets go, to be woken. It has no
// lock and sends nothing: planner (wave_planner.go) owns the one lock and
// sends the wakes once it is released.
//
// It is the leader's memory only: everything in it can be rebuilt from the
// objects (the readers' contract.RolloutAnnotation and
// contract.HaltAnnotation), which is what a new leader does as the start-up
// replay brings each reader back.
type planState struct {
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
}

func newPlanState(maxWave, maxInFlight int) planState {
	return planState{maxWave: maxWave, maxInFlight: maxInFlight, plans: map[planKey]*plan{},
		flights: map[Request]*flight{}, blocked: newSlotWaiters(), waiting: map[Request]Request{}, judged: map[Request]time.Time{}}
}

// requestsOf turns the readers to wake into the requests to queue: each
// with the request it waited with.
func (s *planState) requestsOf(rs []Request) []Request {
	reqs := make([]Request, len(rs))
	for i, r := range rs {
		reqs[i] = r
		if req, ok := s.waiting[r]; ok {
			reqs[i] = req
		}
	}
	return reqs
}

// current returns the plan of key if it is for change.
func (s *planState) current(key planKey, change contract.Change) (*plan, bool) {
	pl, ok := s.plans[key]
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
func (s *planState) install(key planKey, change contract.Change, ms []member, now time.Time, timeout time.Duration) (*plan, []Request) {
	if pl, ok := s.current(key, change); ok {
		return pl, nil
	}
	var judge []Request
	slices.SortFunc(ms, func(a, b member) int { return waves.Compare(a.wave(), b.wave()) })
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
		case m.gone && (timeout > 0 && now.Sub(m.since) > timeout || !s.judged[m.req].Before(m.since)):
			// Long over, or judged already by this leader.
			pl.gone[m.req], pl.done[m.req] = true, true
		case m.gone && s.flights[m.req] == nil && !s.slotFor(m.req, now):
			// No slot: what a leader keeping the bound never left.
			pl.gone[m.req], pl.done[m.req] = true, true
		case m.gone:
			pl.gone[m.req] = true
			f := s.flights[m.req]
			if f == nil {
				f = &flight{since: m.since}
				s.flights[m.req] = f
				judge = append(judge, m.req)
			}
			f.plans = append(f.plans, pl)
		case m.unchecked:
			pl.unchecked[m.req] = time.Time{}
		}
	}
	s.plans[key] = pl
	keep := timeout
	if keep <= 0 {
		keep = DefaultOptions().RolloutTimeout
	}
	for r, since := range s.judged {
		if now.Sub(since) > keep {
			delete(s.judged, r)
		}
	}
	for k, old := range s.plans {
		if !old.finished.IsZero() && now.Sub(old.finished) > keep {
			delete(s.plans, k)
		}
	}
	return pl, judge
}

// admit asks whether r (identity(req)) may be re-stamped now for plans,
// and if so puts it in flight for all of them, with stamp, and returns
// that flight: the caller reports its write (written) or its failure
// (abort) for exactly this flight, since two requests of one workload (a
// change and a re-check) can be admitted at the same time. A reader waiting
// on a halted plan holds up none of its other plans: re-stamping it for
// them would take it to the halted content too, so it waits, but settled
// there. light says the re-stamp starts no pod (health.NothingToRun), so
// it takes no slot of --max-concurrent-rollouts: it can cause no storm, and
// its flight ends as soon as it is written. Any other re-stamp needs a slot
// (slotFor), a reader in flight already included. A reader told to wait
// may wake others: the waves its settling let go, the rollouts and the
// unchecked members it waits on.
func (s *planState) admit(r, req Request, plans []*plan, stamp string, now time.Time, light bool) (admission, *plan, *flight, []Request) {
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
		next := s.unblock(r, now)
		s.wait(r, req)
		for _, other := range plans {
			if other.halt == nil && !other.gone[r] && !other.done[r] {
				// Settled there: it holds up none of their waves.
				other.done[r] = true
				next = append(next, other.dueMembers(s.maxWave, s.waiting)...)
			}
		}
		return waitHalt, halted, nil, next
	}
	for _, pl := range plans {
		if !pl.due(r, s.maxWave) {
			next := s.unblock(r, now)
			s.wait(r, req)
			next = append(next, s.unjudged(pl, now)...)
			next = append(next, pl.uncheckedBefore(r, s.maxWave, s.waiting, now)...)
			return waitWave, pl, nil, next
		}
	}
	if !light && !s.slotFor(r, now) {
		s.blocked.add(r)
		s.wait(r, req)
		return waitBound, nil, nil, nil
	}
	s.blocked.remove(r)
	delete(s.waiting, r)
	f := &flight{since: now, light: light, stamp: stamp, plans: slices.Clone(plans)}
	if old := s.flights[r]; old != nil {
		// Re-stamped again while the last rollout was going. Its plans that
		// are still current (another source's change, whose wave waits on
		// r) stay with the new flight: one verdict, on the new stamp,
		// decides them all, since the new pods carry both changes. A
		// superseded plan is done with r. The clock goes on from the first
		// re-stamp.
		for _, pl := range old.plans {
			switch {
			case slices.Contains(f.plans, pl):
			case s.isCurrent(pl):
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
	s.flights[r] = f
	for _, pl := range plans {
		f.before = append(f.before, membership{pl: pl, gone: pl.gone[r], done: pl.done[r]})
		pl.gone[r] = true
		delete(pl.done, r)
	}
	return admitted, nil, f, nil
}

// abort takes r out of flight f after a re-stamp that was admitted but not
// written, so that it waits again: each of f's plans records r as it did
// before the admit, and the rollout f replaced, if any, goes on. A flight
// another admit has replaced since is only taken out of that one's way
// back.
func (s *planState) abort(r Request, f *flight, now time.Time) []Request {
	if f == nil {
		return nil
	}
	cur := s.flights[r]
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
		return nil
	}
	for _, m := range f.before {
		m.restore(r)
	}
	if f.prev != nil {
		// The rollout that was going goes on: it is still to be judged.
		s.flights[r] = f.prev
	} else {
		delete(s.flights, r)
	}
	return s.nextWaiters(now)
}

// written says r's re-stamp to stamp was written, in flight f: the flight
// it replaced is over. A re-stamp outside the waves (f nil: a source whose
// waves are off) of a reader in flight moves that flight to stamp, whose
// pods carry its changes too: it is judged on what its template carries
// now, its clock going on.
func (s *planState) written(r Request, f *flight, stamp string) {
	if f != nil {
		f.prev = nil
		return
	}
	if cur := s.flights[r]; cur != nil && stamp != "" {
		cur.stamp = stamp
	}
}

// inFlight returns r's flight, if its rollout is being judged.
func (s *planState) inFlight(r Request) (*flight, bool) {
	f, ok := s.flights[r]
	return f, ok
}

// succeeded ends r's flight judged succeeded, if it is still only (a nil
// only: whichever it is), and lets its plans' next waves go: a verdict on
// a flight that a newer re-stamp replaced meanwhile (two requests of one
// workload run at once) ends nothing. The slot it frees goes to a waiter.
func (s *planState) succeeded(r Request, only *flight, now time.Time) []Request {
	next := s.endSucceeded(r, only, now)
	return append(next, s.nextWaiters(now)...)
}

// endSucceeded is succeeded without giving the slot away.
func (s *planState) endSucceeded(r Request, only *flight, now time.Time) []Request {
	f, ok := s.flights[r]
	if !ok || only != nil && f != only {
		return nil
	}
	delete(s.flights, r)
	s.judged[r] = f.since
	var next []Request
	for _, pl := range f.plans {
		pl.done[r] = true
		next = append(next, pl.dueMembers(s.maxWave, s.waiting)...)
		s.forgetIfDone(pl, now)
	}
	return next
}

// failed ends r's flight (if it is still only, as succeeded) and halts its
// plans that are still current (a superseded one halts nothing). It
// returns the plans it halted.
func (s *planState) failed(r Request, reason string, only *flight, now time.Time) ([]*plan, []Request) {
	f, ok := s.flights[r]
	if ok && only != nil && f != only {
		return nil, nil
	}
	delete(s.flights, r)
	var halted []*plan
	if ok {
		s.judged[r] = f.since
		for _, pl := range f.plans {
			if s.isCurrent(pl) && pl.halt == nil {
				pl.halt = &planHalt{by: r, reason: reason}
				halted = append(halted, pl)
			}
		}
	}
	return halted, s.nextWaiters(now)
}

// forgetIfDone marks pl finished once every member has succeeded, so that
// the planner holds only changes in progress or halted. A member that asks
// later rebuilds it from the objects.
func (s *planState) forgetIfDone(pl *plan, now time.Time) {
	if len(pl.done) < len(pl.members) || s.plans[pl.key] != pl {
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
		pl.finished = now
	}
}

// wait remembers req as the request to wake r with: a live change wins
// over a re-check, since its pending changes (and their names, for the
// Event) are kept under it.
func (s *planState) wait(r, req Request) {
	if old, ok := s.waiting[r]; !ok || old.Recheck {
		s.waiting[r] = req
	}
}

// settled says r, a member not re-stamped, needs no re-stamp for its plans
// any more: deleted, opted out, no longer served, or current (the webhook
// stamped a template change of it with the new content). It counts as done,
// so that it holds up no later wave, and a slot kept for it, if any, goes
// to another waiter.
func (s *planState) settled(r Request, now time.Time) []Request {
	next := s.settle(r, now)
	return append(next, s.nextWaiters(now)...)
}

// settledRecheck is settled for a re-check that leaves r alone because it
// has no stamp: unless a live change of r waits in a wave, for which r
// still needs its re-stamp.
func (s *planState) settledRecheck(req Request, now time.Time) []Request {
	if w, ok := s.waiting[identity(req)]; ok && w != req {
		return nil
	}
	return s.settled(identity(req), now)
}

// settle is settled without giving the slot away.
func (s *planState) settle(r Request, now time.Time) []Request {
	var next []Request
	for _, pl := range s.plans {
		delete(pl.unchecked, r)
		if pl.has(r) && !pl.gone[r] && !pl.done[r] {
			pl.done[r] = true
			next = append(next, pl.dueMembers(s.maxWave, s.waiting)...)
			s.forgetIfDone(pl, now)
		}
	}
	delete(s.waiting, r)
	s.blocked.remove(r)
	return next
}

// adopt puts r in flight for the current plans it is a member of and has
// not gone in, with stamp: its stamp went to the new content without the
// hook (the webhook stamped a template change of it), so its rollout is
// judged as if the hook had re-stamped it, and the next wave waits for it.
// A flight of r already going is judged on stamp from now on.
// It reports whether r was such a member. A member planning did not check
// is not adopted (it may never have been stale: its reconcile settles it),
// nor is one that finds no slot of the bound (it is settled too: its
// rollout is its own template change's).
func (s *planState) adopt(r Request, stamp string, now time.Time) bool {
	if f := s.flights[r]; f != nil {
		// Its rollout in flight goes on with the template's stamp, as
		// after any re-stamp of a reader in flight.
		f.stamp = stamp
	}
	var plans []*plan
	for _, pl := range s.plans {
		_, unchecked := pl.unchecked[r]
		if pl.has(r) && !pl.gone[r] && !pl.done[r] && pl.halt == nil && !unchecked {
			plans = append(plans, pl)
		}
	}
	f := s.flights[r]
	if len(plans) == 0 || f == nil && !s.slotFor(r, now) {
		return false
	}
	for _, pl := range plans {
		pl.gone[r] = true
	}
	delete(s.waiting, r)
	s.blocked.remove(r)
	if f != nil {
		f.plans = append(f.plans, plans...)
		return true
	}
	s.flights[r] = &flight{since: now, stamp: stamp, plans: plans}
	return true
}

// haltsBy returns the changes of the current plans that r halts, so that
// a halt whose record could not be written (or was removed by a sync)
// is written again while this leader remembers it.
func (s *planState) haltsBy(r Request) ([]contract.Change, string) {
	var cs []contract.Change
	reason := ""
	for _, pl := range s.plans {
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
func (s *planState) deleted(r Request, now time.Time) []Request {
	next := s.released(r, now)
	next = append(next, s.endSucceeded(r, nil, now)...)
	next = append(next, s.settle(r, now)...)
	return append(next, s.nextWaiters(now)...)
}

// released ends by hand the halts r caused: r counts as succeeded in the
// plans it halted. It touches no flight: a rollout of r in flight now is
// another one (the halting one ended as it failed), judged on its own.
func (s *planState) released(r Request, now time.Time) []Request {
	var next []Request
	for _, pl := range s.plans {
		if pl.halt != nil && pl.halt.by == r {
			pl.halt = nil
			pl.done[r] = true
			next = append(next, pl.dueMembers(s.maxWave, s.waiting)...)
			s.forgetIfDone(pl, now)
		}
	}
	return next
}

// isCurrent reports whether pl is still its key's plan.
func (s *planState) isCurrent(pl *plan) bool {
	return s.plans[pl.key] == pl
}

// counts returns the rollouts in flight and the current plans halted, for
// the gauges.
func (s *planState) counts() (inFlight, halted int) {
	for _, pl := range s.plans {
		if pl.halt != nil {
			halted++
		}
	}
	return len(s.flights), halted
}

// drop forgets the plan of key: its source's readers go at once now
// (contract.WavesAnnotation on the source), so its halt, if any, holds
// nothing back.
func (s *planState) drop(key planKey) {
	delete(s.plans, key)
}

// unjudged lists pl's members in flight whose rollout has not been looked
// at for a while (a wake that was lost, say): a reader that waits for them
// wakes them, so that no wave waits on a rollout nobody judges.
func (s *planState) unjudged(pl *plan, now time.Time) []Request {
	var rs []Request
	for _, m := range pl.members {
		f, ok := s.flights[m]
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
func (s *planState) looked(r Request, now time.Time) {
	if f, ok := s.flights[r]; ok {
		f.judged = now
	}
}

// rolledBack records that r was rolled back off the changes cs
// (checkRolledBack): each one's current plan is halted by r, as a new
// leader would find it halted from r's record, and a rollout of r in
// flight is over (its pods are the earlier revision's now; judging them
// against the stamp it left would time out and halt for nothing).
func (s *planState) rolledBack(r Request, cs []contract.Change, now time.Time) []Request {
	for _, c := range cs {
		pl, ok := s.current(planKey{namespace: r.Namespace, source: c.Source}, c)
		if ok && pl.halt == nil {
			pl.halt = &planHalt{by: r, reason: waves.RolledBack}
			pl.gone[r] = true
		}
	}
	return s.endSucceeded(r, nil, now)
}
