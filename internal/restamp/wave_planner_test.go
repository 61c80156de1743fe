package restamp

import (
	"testing"
	"time"
)

// An event that panics (a bug; controller-runtime recovers the reconcile)
// leaves the lock free: the next event is handled, not blocked for ever.
func TestPanickingEventFreesTheLock(t *testing.T) {
	p := newPlanner(8, 0, nil)
	func() {
		defer func() { _ = recover() }()
		p.step(func(*planState, time.Time) []Request { panic("bug") })
	}()
	done := make(chan struct{})
	go func() {
		p.counts()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("the planner's lock is still held after a panicking event")
	}
}

// Wakes are sent with the lock released: a wake may ask the planner.
func TestWakesAreSentUnlocked(t *testing.T) {
	var p *planner
	var asked bool
	p = newPlanner(8, 0, func(r Request) {
		p.inFlight(r)
		asked = true
	})
	ms := members(1)
	ms[0].gone, ms[0].since = true, wavesT0
	done := make(chan struct{})
	go func() {
		p.install(shared, change1, ms, wavesT0, 0) // wakes r00, to judge it
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("a wake that asks the planner blocked: sent under the lock")
	}
	if !asked {
		t.Fatal("the rebuilt flight was not woken")
	}
}
