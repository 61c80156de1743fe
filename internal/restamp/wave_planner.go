package restamp

import (
	"sync"
	"time"

	"github.com/confighash/confighash/internal/contract"
)

// planner runs the waves: the state machine planState behind one lock.
// Each method is one event, handled whole under the lock by step, which
// alone takes and releases it; the wakes the event decided are sent once it
// is released. Nothing reads or changes the state between the steps of an
// event, so two requests of one workload at once (a change and a re-check)
// see each other's events whole.
//
// A nil planner is the hook without waves (--max-wave-size 0): every event
// is a no-op and every answer the zero one, handled in step alone: admit
// admits, with no flight; nothing is in flight, halted or adopted.
type planner struct {
	mu    sync.Mutex
	state planState
	// now is the clock (time.Now unless a test sets it).
	now func() time.Time
	// wake queues a reader again; called without mu held.
	wake func(Request)
}

func newPlanner(maxWave, maxInFlight int, wake func(Request)) *planner {
	return &planner{state: newPlanState(maxWave, maxInFlight), wake: wake, now: time.Now}
}

// step handles one event: event runs on the state under the lock, with the
// clock's now, and returns the readers to wake, which are sent, each with
// the request it waited with, once the lock is released. On a nil planner
// it does nothing.
func (p *planner) step(event func(s *planState, now time.Time) []Request) {
	if p == nil {
		return
	}
	reqs := func() []Request {
		// Released even if event panics (controller-runtime recovers a
		// reconcile's panic): a lock left held would stop every wave.
		p.mu.Lock()
		defer p.mu.Unlock()
		return p.state.requestsOf(event(&p.state, p.now()))
	}()
	if p.wake == nil {
		return
	}
	for _, r := range reqs {
		p.wake(r)
	}
}

// current returns the plan of key if it is for change.
func (p *planner) current(key planKey, change contract.Change) (pl *plan, ok bool) {
	p.step(func(s *planState, _ time.Time) []Request {
		pl, ok = s.current(key, change)
		return nil
	})
	return pl, ok
}

// install: a change planned (planState.install).
func (p *planner) install(key planKey, change contract.Change, ms []member, now time.Time, timeout time.Duration) (pl *plan) {
	p.step(func(s *planState, _ time.Time) []Request {
		var judge []Request
		pl, judge = s.install(key, change, ms, now, timeout)
		return judge
	})
	return pl
}

// admit: a reader due a re-stamp asks to go (planState.admit).
func (p *planner) admit(r, req Request, plans []*plan, stamp string, now time.Time, light bool) (a admission, by *plan, f *flight) {
	p.step(func(s *planState, _ time.Time) []Request {
		var woken []Request
		a, by, f, woken = s.admit(r, req, plans, stamp, now, light)
		return woken
	})
	return a, by, f
}

// abort: f's re-stamp was admitted but not written (planState.abort).
func (p *planner) abort(r Request, f *flight) {
	p.step(func(s *planState, now time.Time) []Request { return s.abort(r, f, now) })
}

// written: f's re-stamp was written (planState.written).
func (p *planner) written(r Request, f *flight, stamp string) {
	p.step(func(s *planState, _ time.Time) []Request {
		s.written(r, f, stamp)
		return nil
	})
}

// inFlight returns r's flight, if its rollout is being judged.
func (p *planner) inFlight(r Request) (f *flight, ok bool) {
	p.step(func(s *planState, _ time.Time) []Request {
		f, ok = s.inFlight(r)
		return nil
	})
	return f, ok
}

// succeeded: r's rollout succeeded, whichever flight it is in.
func (p *planner) succeeded(r Request) { p.succeededFlight(r, nil) }

// succeededFlight: r's rollout in flight only succeeded (planState.succeeded).
func (p *planner) succeededFlight(r Request, only *flight) {
	p.step(func(s *planState, now time.Time) []Request { return s.succeeded(r, only, now) })
}

// failed: r's rollout failed, whichever flight it is in; the plans it
// halted.
func (p *planner) failed(r Request, reason string) []*plan { return p.failedFlight(r, reason, nil) }

// failedFlight: r's rollout in flight only failed (planState.failed).
func (p *planner) failedFlight(r Request, reason string, only *flight) (halted []*plan) {
	p.step(func(s *planState, now time.Time) []Request {
		var woken []Request
		halted, woken = s.failed(r, reason, only, now)
		return woken
	})
	return halted
}

// settled: r needs no re-stamp for its plans any more (planState.settled).
func (p *planner) settled(r Request) {
	p.step(func(s *planState, now time.Time) []Request { return s.settled(r, now) })
}

// settledRecheck: a re-check left req's reader alone, unstamped
// (planState.settledRecheck).
func (p *planner) settledRecheck(req Request) {
	p.step(func(s *planState, now time.Time) []Request { return s.settledRecheck(req, now) })
}

// adopt: r's stamp went to the new content without the hook
// (planState.adopt).
func (p *planner) adopt(r Request, stamp string, now time.Time) (ok bool) {
	p.step(func(s *planState, _ time.Time) []Request {
		ok = s.adopt(r, stamp, now)
		return nil
	})
	return ok
}

// haltsBy returns the changes of the current plans that r halts, and why.
func (p *planner) haltsBy(r Request) (cs []contract.Change, reason string) {
	p.step(func(s *planState, _ time.Time) []Request {
		cs, reason = s.haltsBy(r)
		return nil
	})
	return cs, reason
}

// deleted: r no longer exists (planState.deleted).
func (p *planner) deleted(r Request) {
	p.step(func(s *planState, now time.Time) []Request { return s.deleted(r, now) })
}

// waitsForWindow: r waits for its window or a freeze
// (planState.waitsForWindow).
func (p *planner) waitsForWindow(r Request) {
	p.step(func(s *planState, now time.Time) []Request { return s.waitsForWindow(r, now) })
}

// release: a user released the halts r caused (planState.released).
func (p *planner) release(r Request) {
	p.step(func(s *planState, now time.Time) []Request { return s.released(r, now) })
}

// rolledBack: r was rolled back off cs (planState.rolledBack).
func (p *planner) rolledBack(r Request, cs []contract.Change) {
	p.step(func(s *planState, now time.Time) []Request { return s.rolledBack(r, cs, now) })
}

// counts returns the rollouts in flight and the current plans halted.
func (p *planner) counts() (inFlight, halted int) {
	p.step(func(s *planState, _ time.Time) []Request {
		inFlight, halted = s.counts()
		return nil
	})
	return inFlight, halted
}

// drop: the source of key asks for all its readers at once now
// (planState.drop).
func (p *planner) drop(key planKey) {
	p.step(func(s *planState, _ time.Time) []Request {
		s.drop(key)
		return nil
	})
}

// looked: r's rollout was judged at now.
func (p *planner) looked(r Request, now time.Time) {
	p.step(func(s *planState, _ time.Time) []Request {
		s.looked(r, now)
		return nil
	})
}

// maxWave is the largest wave (0 without waves).
func (p *planner) maxWave() (n int) {
	p.step(func(s *planState, _ time.Time) []Request {
		n = s.maxWave
		return nil
	})
	return n
}
