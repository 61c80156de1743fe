package restamp

import (
	"sync"
	"testing"
	"time"
)

// Two requests of one workload run at once: one judges it and finds its
// halt of X released by hand, the other (a re-check) re-stamps it for X,
// which waited on that halt. The release must end no rollout, whatever
// runs between its steps: the new re-stamp stays in flight until it is
// judged, and X's next wave waits for it.
//
// The interleaving is forced through the planner's lock: once a waiter has
// waited over a millisecond, sync.Mutex hands the lock to its waiters in
// turn (starvation mode), so the release and then the admit get it in the
// order they queued, and a release that let go of the lock between lifting
// the halt and ending "the" flight would end the admit's flight in
// between.
func TestReleaseRacingAnAdmitEndsNoRollout(t *testing.T) {
	p, x := sharedPlan(2)
	r0, r1 := req("r00"), req("r01")
	p.admit(r0, r0, []*plan{x}, "s1", wavesT0, false)
	p.failed(r0, "NonZeroExit")
	recheck := r0
	recheck.Recheck = true
	if v, _, _ := p.admit(r0, recheck, []*plan{x}, "s2", wavesT0, false); v != waitHalt {
		t.Fatalf("r00 for X while X is halted: %v, want waitHalt", v)
	}

	var wg sync.WaitGroup
	var f *flight
	var v admission
	queue := func(step func()) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			step()
		}()
		time.Sleep(5 * time.Millisecond) // parked on the lock, in this order
	}
	p.mu.Lock()
	queue(func() { p.counts() }) // the waiter that turns starvation mode on
	queue(func() { p.release(r0) })
	queue(func() { v, _, f = p.admit(r0, recheck, []*plan{x}, "s2", wavesT0, false) })
	// The first waiter, woken, finds the lock taken again: it has waited
	// over a millisecond, so the lock goes to the waiters in turn from now.
	p.mu.Unlock()
	p.mu.Lock()
	time.Sleep(5 * time.Millisecond)
	p.mu.Unlock()
	wg.Wait()

	if v != admitted {
		t.Fatalf("r00 for X after the release: %v, want admitted", v)
	}
	if cur, ok := p.inFlight(r0); !ok || cur != f {
		t.Fatalf("after the release, r00's re-stamp for X is not in flight (in flight: %v): ended unjudged", ok)
	}
	if v, _, _ := p.admit(r1, r1, []*plan{x}, "s", wavesT0, false); v != waitWave {
		t.Fatalf("X's second wave: %v while its canary still rolls, want waitWave", v)
	}
}
