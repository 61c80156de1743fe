package restamp

import (
	"fmt"
	"slices"
	"testing"
	"time"
)

// wakeBlocked offers the free slots of the bound to its waiters now, as the
// events that free a slot do: what a test uses to stand for time passing.
// In the hook no event is needed for that: a slot kept for a woken waiter
// that never asks lapses after slotKept, and each waiter asks again within
// waitRecheck.
func (p *planner) wakeBlocked() {
	p.step(func(s *planState, now time.Time) []Request { return s.nextWaiters(now) })
}

// onePlan installs a plan of its own for r, read from source src, and
// returns it.
func onePlan(p *planner, r Request, src, content string) *plan {
	return planOf(p, src, content, []member{{req: r}})
}

// A reader in flight that is re-stamped again (a new change of its
// source) needs a free slot like any other reader; its rollout in flight
// keeps the one it has until it ends.
func TestReadmitNeedsASlot(t *testing.T) {
	p := newPlanner(8, 1, nil)
	p.now = func() time.Time { return wavesT0 }
	t0, v0 := reqIn("tenant", "t0"), reqIn("victim", "v0")
	if v, _, _ := p.admit(t0, t0, []*plan{onePlan(p, t0, "configmap/t", "0000000000000001")}, "s1", wavesT0, false); v != admitted {
		t.Fatalf("the tenant's canary: %v", v)
	}
	if v, _, _ := p.admit(v0, v0, []*plan{onePlan(p, v0, "configmap/v", "0000000000000001")}, "s", wavesT0, false); v != waitBound {
		t.Fatalf("the victim with the one slot taken: %v, want waitBound", v)
	}
	again := onePlan(p, t0, "configmap/t", "0000000000000002")
	if v, _, _ := p.admit(t0, t0, []*plan{again}, "s2", wavesT0.Add(10*time.Minute), false); v != waitBound {
		t.Fatalf("the tenant's canary re-stamped again with the bound full: %v, want waitBound", v)
	}
	if f, _ := p.inFlight(t0); f == nil || f.stamp != "s1" {
		t.Fatalf("the rollout in flight is not the first one: %+v", f)
	}
}

// A re-stamp of a reader in flight does not restart its clock: the
// timeout counts from the first.
func TestReadmitKeepsTheClock(t *testing.T) {
	p := newPlanner(8, 10, nil)
	t0 := reqIn("tenant", "t0")
	for i, at := range []time.Duration{0, 10 * time.Minute, 20 * time.Minute} {
		pl := onePlan(p, t0, "configmap/t", fmt.Sprintf("%016d", i+1))
		if v, _, f := p.admit(t0, t0, []*plan{pl}, "s", wavesT0.Add(at), false); v != admitted || !f.since.Equal(wavesT0) {
			t.Fatalf("re-stamp at +%s: %v, since %v; want admitted, since the first re-stamp %v", at, v, f.since, wavesT0)
		}
	}
}

// A free slot goes to the waiting namespace that holds the fewest, and a
// namespace holding more is refused it while the other waits.
func TestFreeSlotGoesToTheNamespaceHoldingFewest(t *testing.T) {
	var woken []Request
	p := newPlanner(8, 4, func(r Request) { woken = append(woken, r) })
	p.now = func() time.Time { return wavesT0 }
	var tenant []Request
	for i := range 24 {
		r := reqIn("tenant", fmt.Sprintf("t%02d", i))
		tenant = append(tenant, r)
		p.admit(r, r, []*plan{onePlan(p, r, "configmap/"+r.Name, "0000000000000001")}, "s", wavesT0, false)
	}
	v0 := reqIn("victim", "v0")
	if v, _, _ := p.admit(v0, v0, []*plan{onePlan(p, v0, "configmap/v", "0000000000000001")}, "s", wavesT0, false); v != waitBound {
		t.Fatalf("the victim: %v, want waitBound", v)
	}
	p.succeeded(tenant[0])
	if !slices.Equal(woken, []Request{v0}) {
		t.Fatalf("the free slot woke %v, want the victim, whose namespace holds none", woken)
	}
	// A tenant's reader asking before the victim does is refused the
	// slot kept for the victim.
	for _, r := range tenant[4:] {
		if v, _, _ := p.admit(r, r, []*plan{onePlan(p, r, "configmap/"+r.Name, "0000000000000001")}, "s", wavesT0, false); v != waitBound {
			t.Fatalf("%s asking with the slot kept for the victim: %v, want waitBound", r.Name, v)
		}
	}
	if v, _, _ := p.admit(v0, v0, []*plan{onePlan(p, v0, "configmap/v", "0000000000000001")}, "s", wavesT0, false); v != admitted {
		t.Fatalf("the woken victim: %v, want admitted", v)
	}
}

// A slot kept for a woken waiter that never asks is given up after a
// while, to the next waiter.
func TestKeptSlotLapses(t *testing.T) {
	var woken []string
	now := wavesT0
	p := newPlanner(8, 1, func(r Request) { woken = append(woken, r.Name) })
	p.now = func() time.Time { return now }
	a, b, c := reqIn("a", "a0"), reqIn("b", "b0"), reqIn("c", "c0")
	for _, r := range []Request{a, b, c} {
		p.admit(r, r, []*plan{onePlan(p, r, "configmap/"+r.Name, "0000000000000001")}, "s", now, false)
	}
	p.succeeded(a)
	if len(woken) != 1 {
		t.Fatalf("one slot woke %v", woken)
	}
	now = now.Add(slotKept + time.Second)
	p.wakeBlocked()
	if len(woken) != 2 || woken[1] == woken[0] {
		t.Fatalf("after the kept slot lapsed: woke %v, want the other waiter", woken)
	}
}

// A new leader rebuilding flights from records keeps the bound: a gone
// member beyond it counts as ended, and a record's time in the future
// counts as now.
func TestInstallKeepsTheBound(t *testing.T) {
	p := newPlanner(8, 2, nil)
	p.now = func() time.Time { return wavesT0 }
	ms := members(5)
	for i := range ms {
		ms[i].gone, ms[i].since = true, wavesT0.Add(time.Hour)
	}
	pl := p.install(shared, change1, ms, wavesT0, 15*time.Minute)
	if n, _ := p.counts(); n != 2 {
		t.Fatalf("%d rebuilt rollouts in flight, want the bound, 2", n)
	}
	for _, m := range pl.members {
		if f, ok := p.inFlight(m); ok && f.since.After(wavesT0) {
			t.Fatalf("%s in flight since %v, after now", m.Name, f.since)
		}
		if _, ok := p.inFlight(m); !ok && !pl.done[m] {
			t.Fatalf("%s neither in flight nor done: the plan would wait on it for ever", m.Name)
		}
	}
}

// A halt released by hand ends no other rollout of the reader: one in
// flight for another change is still to be judged.
func TestReleaseEndsNoOtherRollout(t *testing.T) {
	p, x := sharedPlan(2)
	r0 := req("r00")
	p.admit(r0, r0, []*plan{x}, "s1", wavesT0, false)
	p.failed(r0, "NonZeroExit")
	y := planOf(p, "configmap/y", "0000000000000009", members(2))
	if !p.adopt(r0, "s2", wavesT0) {
		t.Fatal("r00 was not adopted for Y")
	}
	p.release(r0)
	if _, ok := p.inFlight(r0); !ok {
		t.Fatal("releasing X's halt ended r00's rollout for Y unjudged")
	}
	r1 := req("r01")
	if v, _, _ := p.admit(r1, r1, []*plan{y}, "s", wavesT0, false); v != waitWave {
		t.Fatalf("Y's second wave: %v while its canary still rolls, want waitWave", v)
	}
}

// A reader the webhook stamped mid-waves takes a slot to be judged in;
// with none free it is settled instead of passing the bound.
func TestAdoptTakesASlot(t *testing.T) {
	p := newPlanner(8, 1, nil)
	p.now = func() time.Time { return wavesT0 }
	t0 := reqIn("tenant", "t0")
	p.admit(t0, t0, []*plan{onePlan(p, t0, "configmap/t", "0000000000000001")}, "s", wavesT0, false)
	pl := p.install(shared, change1, members(2), wavesT0, 0)
	if p.adopt(req("r00"), "s", wavesT0) {
		t.Fatal("adopted past the bound")
	}
	p.settled(req("r00"))
	if !pl.done[req("r00")] {
		t.Fatal("the reader not adopted was not settled")
	}
}

// A woken waiter that turns out to wait for something no slot ends (its
// window, its wave) hands the slot kept for it on at once, and its
// namespace no longer counts as waiting for one.
func TestAWaiterForSomethingElseHandsItsSlotOn(t *testing.T) {
	for _, tc := range []struct {
		name  string
		waits func(t *testing.T, p *planner, b0 Request)
	}{
		{"its window", func(_ *testing.T, p *planner, b0 Request) { p.waitsForWindow(b0) }},
		{"its wave", func(t *testing.T, p *planner, b0 Request) {
			first := reqIn("b", "a0") // ordered first: b0's wave waits for its rollout
			pl := planOf(p, "configmap/b2", "0000000000000002", []member{{req: first}, {req: b0}})
			if v, _, _ := p.admit(b0, b0, []*plan{pl}, "s2", wavesT0, false); v != waitWave {
				t.Fatalf("b0 behind its wave: %v, want waitWave", v)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var woken []Request
			p := newPlanner(1, 1, func(r Request) { woken = append(woken, r) })
			p.now = func() time.Time { return wavesT0 }
			t0, b0, c0 := reqIn("a", "t0"), reqIn("b", "b0"), reqIn("c", "c0")
			if v, _, _ := p.admit(t0, t0, []*plan{onePlan(p, t0, "configmap/t", "0000000000000001")}, "s", wavesT0, false); v != admitted {
				t.Fatalf("t0: %v", v)
			}
			for _, r := range []Request{b0, c0} {
				if v, _, _ := p.admit(r, r, []*plan{onePlan(p, r, "configmap/"+r.Name, "0000000000000001")}, "s", wavesT0, false); v != waitBound {
					t.Fatalf("%s with the slot taken: %v, want waitBound", r.Name, v)
				}
			}
			p.succeeded(t0)
			if !slices.Equal(woken, []Request{b0}) {
				t.Fatalf("the free slot woke %v, want b0", woken)
			}
			woken = nil
			tc.waits(t, p, b0)
			if !slices.Contains(woken, c0) {
				t.Fatalf("b0 waits for %s; woke %v, want c0 given the slot at once", tc.name, woken)
			}
			if v, _, _ := p.admit(c0, c0, []*plan{onePlan(p, c0, "configmap/c0", "0000000000000001")}, "s", wavesT0, false); v != admitted {
				t.Fatalf("c0 asking for the slot b0 left: %v, want admitted", v)
			}
		})
	}
}
