package restamp

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/confighash/confighash/internal/contract"
)

var (
	wavesT0 = time.Date(2026, 12, 1, 15, 0, 0, 0, time.UTC)
	shared  = planKey{namespace: "ns", source: "configmap/shared"}
	change1 = contract.Change{Source: "configmap/shared", Content: "0000000000000001"}
	change2 = contract.Change{Source: "configmap/shared", Content: "0000000000000002"}
)

// members makes n waiting members r0..r(n-1), in that order.
func members(n int) []member {
	ms := make([]member, n)
	for i := range ms {
		ms[i] = member{req: req(fmt.Sprintf("r%02d", i))}
	}
	return ms
}

// planOf installs a plan of content to src for ms, in their readers'
// namespace.
func planOf(p *planner, src, content string, ms []member) *plan {
	c := contract.Change{Source: src, Content: content}
	return p.install(planKey{namespace: ms[0].req.Namespace, source: src}, c, ms, wavesT0, 0)
}

// readerPlans installs n plans of one reader each, r<i> reading
// configmap/c<i>: readers that contend with one another only for the bound.
func readerPlans(p *planner, n int) []*plan {
	plans := make([]*plan, n)
	for i, m := range members(n) {
		plans[i] = planOf(p, fmt.Sprintf("configmap/c%d", i), "0000000000000001", []member{m})
	}
	return plans
}

// sharedPlan is a planner without wakes and its plan of change1 to
// configmap/shared for n readers, r00 on.
func sharedPlan(n int) (*planner, *plan) {
	p := newPlanner(8, 0, nil)
	return p, p.install(shared, change1, members(n), wavesT0, 0)
}

// admittedTwice is a plan of 3 whose first member, r0, is admitted twice
// at once (its change and a re-check): the planner, the plan, r0 and the
// two flights, in order.
func admittedTwice() (p *planner, pl *plan, r0 Request, first, second *flight) {
	p, pl = sharedPlan(3)
	r0 = req("r00")
	_, _, first = p.admit(r0, r0, []*plan{pl}, "s1", wavesT0, false)
	_, _, second = p.admit(r0, r0, []*plan{pl}, "s1", wavesT0, false)
	return p, pl, r0, first, second
}

// admitAll asks for every member not re-stamped nor settled, as their reconciles
// do, and returns those admitted.
func admitAll(p *planner, pl *plan, n int) []string {
	var got []string
	for i := range n {
		r := req(fmt.Sprintf("r%02d", i))
		if pl.gone[r] || pl.done[r] {
			continue
		}
		if v, _, _ := p.admit(r, r, []*plan{pl}, "stamp", wavesT0, false); v == admitted {
			got = append(got, r.Name)
		}
	}
	return got
}

func TestWavesGoOneTwoFour(t *testing.T) {
	var woken []string
	p := newPlanner(4, 0, func(r Request) { woken = append(woken, r.Name) })
	pl := p.install(shared, change1, members(9), wavesT0, 0)
	want := [][]string{{"r00"}, {"r01", "r02"}, {"r03", "r04", "r05", "r06"}, {"r07", "r08"}}
	for i, wave := range want {
		if got := admitAll(p, pl, 9); !slices.Equal(got, wave) {
			t.Fatalf("wave %d: admitted %v, want %v", i, got, wave)
		}
		// Nobody else goes while the wave rolls out.
		if got := admitAll(p, pl, 9); len(got) != 0 {
			t.Fatalf("wave %d in flight: admitted %v too", i, got)
		}
		woken = nil
		for j, name := range wave {
			p.succeeded(req(name))
			if j < len(wave)-1 && len(woken) != 0 {
				t.Fatalf("wave %d: %v woken before the whole wave succeeded", i, woken)
			}
		}
		if i+1 < len(want) && !slices.Equal(woken, want[i+1]) {
			t.Fatalf("after wave %d: woke %v, want %v", i, woken, want[i+1])
		}
	}
}

func TestHaltStopsTheWaves(t *testing.T) {
	p, pl := sharedPlan(6)
	if got := admitAll(p, pl, 6); !slices.Equal(got, []string{"r00"}) {
		t.Fatalf("admitted %v, want the canary only", got)
	}
	if halted := p.failed(req("r00"), "CrashLoopBackOff"); len(halted) != 1 || halted[0] != pl {
		t.Fatalf("failed halted %v, want the plan", halted)
	}
	for i := 1; i < 6; i++ {
		r := req(fmt.Sprintf("r%02d", i))
		if v, by, _ := p.admit(r, r, []*plan{pl}, "stamp", wavesT0, false); v != waitHalt || by != pl {
			t.Fatalf("%s: %v, want waitHalt", r.Name, v)
		}
	}
	if _, h := p.counts(); h != 1 {
		t.Fatalf("halted count %d, want 1", h)
	}
	// The fix: a new content gets a new plan, and every reader goes to it,
	// the failed one included, in waves again.
	pl2 := p.install(shared, change2, members(6), wavesT0, 0)
	if got := admitAll(p, pl2, 6); !slices.Equal(got, []string{"r00"}) {
		t.Fatalf("after the fix: admitted %v, want the canary only", got)
	}
	if _, h := p.counts(); h != 0 {
		t.Fatalf("halted count %d after the fix, want 0", h)
	}
}

func TestReleaseLetsTheWavesGoOn(t *testing.T) {
	var woken []string
	p := newPlanner(8, 0, func(r Request) { woken = append(woken, r.Name) })
	pl := p.install(shared, change1, members(4), wavesT0, 0)
	admitAll(p, pl, 4)
	p.failed(req("r00"), "CrashLoopBackOff")
	for i := 1; i < 4; i++ {
		r := req(fmt.Sprintf("r%02d", i))
		p.admit(r, r, []*plan{pl}, "stamp", wavesT0, false)
	}
	p.release(req("r00"))
	if !slices.Equal(woken, []string{"r01", "r02"}) {
		t.Fatalf("release woke %v, want the second wave", woken)
	}
	if got := admitAll(p, pl, 4); !slices.Equal(got, []string{"r01", "r02"}) {
		t.Fatalf("after release: admitted %v", got)
	}
}

func TestNewLeaderRebuildsFromObjects(t *testing.T) {
	var woken []string
	p := newPlanner(8, 0, func(r Request) { woken = append(woken, r.Name) })
	ms := members(7)
	// r00 went and succeeded, r01 and r02 went and are rolling: as a new
	// leader sees them, all three gone (their rollout annotation).
	for i := range 3 {
		ms[i].gone, ms[i].since = true, wavesT0
	}
	pl := p.install(shared, change1, ms, wavesT0.Add(time.Minute), 15*time.Minute)
	// Each is woken, so that its rollout is judged at once.
	if !slices.Equal(woken, []string{"r00", "r01", "r02"}) {
		t.Fatalf("the rebuild woke %v, want the three gone readers", woken)
	}
	for i := range 3 {
		if _, ok := p.inFlight(req(fmt.Sprintf("r%02d", i))); !ok {
			t.Fatalf("r%02d not in flight after the rebuild", i)
		}
	}
	if got := admitAll(p, pl, 7); len(got) != 0 {
		t.Fatalf("admitted %v before the rebuilt flights were judged", got)
	}
	p.succeeded(req("r00"))
	if got := admitAll(p, pl, 7); len(got) != 0 {
		t.Fatalf("admitted %v while the second wave still rolls", got)
	}
	p.succeeded(req("r01"))
	p.succeeded(req("r02"))
	if got := admitAll(p, pl, 7); !slices.Equal(got, []string{"r03", "r04", "r05", "r06"}) {
		t.Fatalf("admitted %v, want the third wave and no one twice", got)
	}
	// A halt on an object is a halt of the rebuilt plan.
	ms = members(3)
	ms[0].gone, ms[0].halted, ms[0].reason = true, true, "ProgressDeadlineExceeded"
	pl = planOf(p, "configmap/other", "0000000000000003", ms)
	if pl.halt == nil || pl.halt.reason != "ProgressDeadlineExceeded" {
		t.Fatalf("rebuilt plan halt %+v, want the object's", pl.halt)
	}
}

func TestBoundAcrossChanges(t *testing.T) {
	var woken []string
	p := newPlanner(16, 3, func(r Request) { woken = append(woken, r.Name) })
	plans := readerPlans(p, 5)
	var admittedN int
	for i, pl := range plans {
		r := req(fmt.Sprintf("r%02d", i))
		v, _, _ := p.admit(r, r, []*plan{pl}, "stamp", wavesT0, false)
		if v == admitted {
			admittedN++
		} else if v != waitBound {
			t.Fatalf("%s: %v, want admitted or waitBound", r.Name, v)
		}
	}
	if admittedN != 3 {
		t.Fatalf("admitted %d canaries of 5 changes, want the bound, 3", admittedN)
	}
	// One slot frees: one blocked reader is woken, not all of them.
	p.succeeded(req("r00"))
	if len(woken) != 1 || (woken[0] != "r03" && woken[0] != "r04") {
		t.Fatalf("a free slot woke %v, want one of the blocked readers", woken)
	}
	p.succeeded(req("r01"))
	slices.Sort(woken)
	if !slices.Equal(woken, []string{"r03", "r04"}) {
		t.Fatalf("two free slots woke %v, want both blocked readers", woken)
	}
}

func TestSupersededRolloutHaltsNothing(t *testing.T) {
	p, pl1 := sharedPlan(3)
	admitAll(p, pl1, 3)
	pl2 := p.install(shared, change2, members(3), wavesT0, 0)
	if halted := p.failed(req("r00"), "CrashLoopBackOff"); len(halted) != 0 {
		t.Fatalf("a failure of the superseded change halted %v", halted)
	}
	if got := admitAll(p, pl2, 3); !slices.Equal(got, []string{"r00"}) {
		t.Fatalf("the newer change: admitted %v, want its canary", got)
	}
}

func TestRebuildTrustsOldRolloutsDone(t *testing.T) {
	p := newPlanner(8, 0, nil)
	ms := members(3)
	ms[0].gone, ms[0].since = true, wavesT0
	// Re-stamped longer ago than the rollout timeout: it has long ended,
	// and is not judged again.
	pl := p.install(shared, change1, ms, wavesT0.Add(time.Hour), 15*time.Minute)
	if _, ok := p.inFlight(req("r00")); ok {
		t.Fatal("an old rollout was put in flight again")
	}
	if got := admitAll(p, pl, 3); !slices.Equal(got, []string{"r01", "r02"}) {
		t.Fatalf("admitted %v, want the second wave", got)
	}
}

func TestSettledMembersHoldUpNoWave(t *testing.T) {
	var woken []string
	p := newPlanner(8, 0, func(r Request) { woken = append(woken, r.Name) })
	pl := p.install(shared, change1, members(4), wavesT0, 0)
	for i := 1; i < 4; i++ {
		r := req(fmt.Sprintf("r%02d", i))
		if v, _, _ := p.admit(r, r, []*plan{pl}, "stamp", wavesT0, false); v != waitWave {
			t.Fatalf("%s: %v before the canary went, want waitWave", r.Name, v)
		}
	}
	// The canary was deleted (or opted out, or stamped by the webhook)
	// before its turn: the second wave is due at once, and only those
	// who asked are woken.
	p.settled(req("r00"))
	if !slices.Equal(woken, []string{"r01", "r02"}) {
		t.Fatalf("settling the canary woke %v, want the second wave", woken)
	}
	if got := admitAll(p, pl, 4); !slices.Equal(got, []string{"r01", "r02"}) {
		t.Fatalf("admitted %v", got)
	}
	// A member in flight is not settled by it: its rollout still counts.
	p.settled(req("r01"))
	if got := admitAll(p, pl, 4); len(got) != 0 {
		t.Fatalf("admitted %v while r01 still rolls", got)
	}
}

// Only readers that asked are woken: one that has not (its replay left it
// alone, say) comes with its own event.
func TestOnlyWaitersAreWoken(t *testing.T) {
	var woken []string
	p := newPlanner(8, 0, func(r Request) { woken = append(woken, r.Name) })
	pl := p.install(shared, change1, members(3), wavesT0, 0)
	r0, r2 := req("r00"), req("r02")
	p.admit(r0, r0, []*plan{pl}, "stamp", wavesT0, false)
	p.admit(r2, r2, []*plan{pl}, "stamp", wavesT0, false)
	p.succeeded(r0)
	if !slices.Equal(woken, []string{"r02"}) {
		t.Fatalf("woke %v, want r02 only (r01 never asked)", woken)
	}
}

// A canary of X re-stamped for Y while its X rollout goes: the new flight
// keeps X's plan, so X's next wave still waits for its verdict.
func TestRestampKeepsTheOtherPlansFlight(t *testing.T) {
	p, x := sharedPlan(3)
	y := planOf(p, "configmap/y", "0000000000000009", members(1))
	r0 := req("r00")
	p.admit(r0, r0, []*plan{x}, "s1", wavesT0, false)
	if v, _, _ := p.admit(r0, r0, []*plan{y}, "s2", wavesT0, false); v != admitted {
		t.Fatalf("Y's canary: %v", v)
	}
	if got := admitAll(p, x, 3); len(got) != 0 {
		t.Fatalf("X's second wave went (%v) before its canary was judged", got)
	}
	if halted := p.failed(r0, "NonZeroExit"); len(halted) != 2 {
		t.Fatalf("the failure halted %d plans, want X's and Y's", len(halted))
	}
}

// An admitted re-stamp that is not written puts back the rollout that was
// going, which is still judged and counted.
func TestAbortPutsTheRunningFlightBack(t *testing.T) {
	p := newPlanner(8, 2, nil)
	pl := p.install(shared, change1, members(2), wavesT0, 0)
	r0 := req("r00")
	p.admit(r0, r0, []*plan{pl}, "s1", wavesT0, false)
	pl2 := p.install(shared, change2, members(2), wavesT0, 0)
	_, _, second := p.admit(r0, r0, []*plan{pl2}, "s2", wavesT0, false)
	p.abort(r0, second)
	f, ok := p.inFlight(r0)
	if !ok {
		t.Fatal("after the abort: not in flight, want the first rollout back")
	}
	if f.stamp != "s1" {
		t.Fatalf("after the abort: in flight with %q, want the first rollout back", f.stamp)
	}
	if n, _ := p.counts(); n != 1 {
		t.Fatalf("%d in flight, want 1", n)
	}
}

// A second try for a reader whose re-stamp already succeeded (a reconcile
// on an old copy of it) that is aborted leaves it done: the next wave does
// not wait for it again.
func TestAbortAfterSuccessKeepsTheReaderDone(t *testing.T) {
	p, pl := sharedPlan(3)
	r0 := req("r00")
	if v, _, _ := p.admit(r0, r0, []*plan{pl}, "s1", wavesT0, false); v != admitted {
		t.Fatalf("canary: %v, want admitted", v)
	}
	p.succeeded(r0)
	v, _, second := p.admit(r0, r0, []*plan{pl}, "s1", wavesT0, false)
	if v != admitted {
		t.Fatalf("second try: %v, want admitted", v)
	}
	p.abort(r0, second)
	if !pl.done[r0] || !pl.gone[r0] {
		t.Errorf("after the aborted second try: done %v, gone %v, want both", pl.done[r0], pl.gone[r0])
	}
	if got := admitAll(p, pl, 3); !slices.Equal(got, []string{"r01", "r02"}) {
		t.Errorf("second wave admitted %v, want [r01 r02]", got)
	}
}

// Two requests of one workload (its change and a re-check) admitted at the
// same time: the first one's write lands, the second loses the optimistic
// lock to it and is aborted. The written rollout stays in flight, to be
// judged; the wave does not wait for it forever.
func TestAbortOfTheLaterAdmitKeepsTheWrittenFlight(t *testing.T) {
	p, pl, r0, first, second := admittedTwice()
	p.written(r0, first, "s1")
	p.abort(r0, second)
	f, ok := p.inFlight(r0)
	if !ok || f != first {
		t.Fatalf("after the second admit's abort: in flight %v (%p), want the written first flight (%p)", ok, f, first)
	}
	p.succeededFlight(r0, f)
	if got := admitAll(p, pl, 3); !slices.Equal(got, []string{"r01", "r02"}) {
		t.Errorf("second wave admitted %v, want [r01 r02]", got)
	}
}

// The other order: the later admit's write lands, and the earlier one,
// replaced meanwhile, is aborted. The later flight stays, and no longer
// goes back to the aborted one if it fails to be written.
func TestAbortOfAReplacedFlightLeavesTheLaterOne(t *testing.T) {
	p, pl, r0, first, second := admittedTwice()
	p.abort(r0, first)
	if f, ok := p.inFlight(r0); !ok || f != second || second.prev != nil {
		t.Fatalf("after the first admit's abort: in flight %v, the second %v, going back to %p", ok, f == second, second.prev)
	}
	p.abort(r0, second)
	if _, ok := p.inFlight(r0); ok || pl.gone[r0] {
		t.Errorf("after both aborts: in flight %v, gone %v; want neither", ok, pl.gone[r0])
	}
}

// A reader waiting on a halted plan of X is settled in Y's plan, whose
// later waves do not wait for it.
func TestHaltOfOneSourceStallsNoOther(t *testing.T) {
	var woken []string
	p := newPlanner(8, 0, func(r Request) { woken = append(woken, r.Name) })
	x := p.install(shared, change1, members(2), wavesT0, 0)
	y := planOf(p, "configmap/y", "0000000000000009", []member{{req: req("r01")}, {req: req("r02")}})
	r0, r1, r2 := req("r00"), req("r01"), req("r02")
	p.admit(r0, r0, []*plan{x}, "s", wavesT0, false)
	p.failed(r0, "NonZeroExit")
	p.admit(r2, r2, []*plan{y}, "s", wavesT0, false) // waits for r01, Y's canary
	if v, _, _ := p.admit(r1, r1, []*plan{x, y}, "s", wavesT0, false); v != waitHalt {
		t.Fatalf("r01: %v, want waitHalt", v)
	}
	p.wakeBlocked()
	if !slices.Equal(woken, []string{"r02"}) {
		t.Fatalf("woke %v, want Y's next wave", woken)
	}
}

// A reader whose stamp went to the new content through the webhook (a
// template change) is judged as if the hook had re-stamped it.
func TestAdoptedReaderIsJudged(t *testing.T) {
	p, pl := sharedPlan(3)
	if !p.adopt(req("r00"), "s", wavesT0) {
		t.Fatal("the canary was not adopted")
	}
	if got := admitAll(p, pl, 3); len(got) != 0 {
		t.Fatalf("admitted %v while the adopted canary rolls", got)
	}
	p.succeeded(req("r00"))
	if got := admitAll(p, pl, 3); len(got) != 2 {
		t.Fatalf("admitted %v after it rolled out", got)
	}
}

// A plan rebuilt by the same leader does not judge again a rollout it
// judged already.
func TestRebuildSkipsJudgedRollouts(t *testing.T) {
	p, pl := sharedPlan(2)
	r0 := req("r00")
	p.admit(r0, r0, []*plan{pl}, "s", wavesT0, false)
	p.succeeded(r0)
	delete(p.state.plans, shared) // forgotten, as a finished plan is
	ms := members(2)
	ms[0].gone, ms[0].since = true, wavesT0
	p.install(shared, change1, ms, wavesT0.Add(time.Minute), 15*time.Minute)
	if _, ok := p.inFlight(r0); ok {
		t.Fatal("a rollout judged already was put in flight again")
	}
}

// A rollout in flight that nobody judged for a while (its wake was lost)
// is woken by a reader that waits for it.
func TestWaitersWakeAnUnjudgedFlight(t *testing.T) {
	var woken []string
	p := newPlanner(8, 0, func(r Request) { woken = append(woken, r.Name) })
	pl := p.install(shared, change1, members(2), wavesT0, 0)
	r0, r1 := req("r00"), req("r01")
	p.admit(r0, r0, []*plan{pl}, "s", wavesT0, false)
	p.admit(r1, r1, []*plan{pl}, "s", wavesT0.Add(time.Second), false)
	p.wakeBlocked()
	if len(woken) != 0 {
		t.Fatalf("woke %v while the canary was judged recently", woken)
	}
	p.admit(r1, r1, []*plan{pl}, "s", wavesT0.Add(time.Minute), false)
	p.wakeBlocked()
	if !slices.Equal(woken, []string{"r00"}) {
		t.Fatalf("woke %v, want the unjudged canary", woken)
	}
}

// A verdict on a flight that a newer re-stamp replaced ends nothing.
func TestStaleVerdictEndsNoNewerFlight(t *testing.T) {
	p, pl := sharedPlan(2)
	r0 := req("r00")
	p.admit(r0, r0, []*plan{pl}, "s1", wavesT0, false)
	old, _ := p.inFlight(r0)
	pl2 := p.install(shared, change2, members(2), wavesT0, 0)
	p.admit(r0, r0, []*plan{pl2}, "s2", wavesT0, false)
	p.succeededFlight(r0, old)
	if f, ok := p.inFlight(r0); !ok || f.stamp != "s2" {
		t.Fatalf("the verdict on s1 ended the flight of s2 (%v)", ok)
	}
	if halted := p.failedFlight(r0, "NonZeroExit", old); len(halted) != 0 {
		t.Fatalf("a failure of s1 halted %d plans", len(halted))
	}
}

// The reader that halted one change gets another change of its (of
// another source, which may be the fix): it already runs the halted
// content, so its re-stamp spreads nothing. (Whether it is then judged is
// the gate's question: a reader failing before a change is not.)
func TestHalterGetsItsOtherChanges(t *testing.T) {
	p, s := sharedPlan(2)
	r0 := req("r00")
	p.admit(r0, r0, []*plan{s}, "s1", wavesT0, false)
	p.failed(r0, "NonZeroExit")
	tp := planOf(p, "configmap/t", "0000000000000007", members(3))
	if v, _, _ := p.admit(r0, r0, []*plan{tp}, "s2", wavesT0, false); v != admitted {
		t.Fatalf("the halting reader: %v for another change, want admitted", v)
	}
}

// A blocked reader that settles gives its slot to another.
func TestSettledBlockedReaderPassesItsSlot(t *testing.T) {
	var woken []string
	p := newPlanner(8, 1, func(r Request) { woken = append(woken, r.Name) })
	plans := readerPlans(p, 3)
	for i, pl := range plans {
		r := req(fmt.Sprintf("r%02d", i))
		p.admit(r, r, []*plan{pl}, "s", wavesT0, false)
	}
	p.succeeded(req("r00"))
	if len(woken) != 1 {
		t.Fatalf("one slot woke %v", woken)
	}
	first := woken[0]
	p.settled(req(first))
	if len(woken) != 2 || woken[1] == first {
		t.Fatalf("the woken reader settled, and the slot went to %v", woken)
	}
}

// A finished plan is kept, so that a member that asks late (its hold
// ended) finds its wave due instead of a rebuilt plan waiting on readers
// that settled.
func TestFinishedPlanIsKept(t *testing.T) {
	p, pl := sharedPlan(3)
	p.settled(req("r00"))
	p.settled(req("r02"))
	r1 := req("r01")
	p.admit(r1, r1, []*plan{pl}, "s", wavesT0, false)
	p.succeeded(r1)
	if got, ok := p.current(shared, change1); !ok || got != pl {
		t.Fatal("the finished plan was dropped")
	}
	r2 := req("r02")
	if v, _, _ := p.admit(r2, r2, []*plan{pl}, "s", wavesT0, false); v != admitted {
		t.Fatalf("a late member: %v, want admitted", v)
	}
}

// A reader that starts no pod takes no slot of the bound.
func TestLightReaderTakesNoSlot(t *testing.T) {
	p := newPlanner(8, 1, nil)
	a := p.install(shared, change1, members(1), wavesT0, 0)
	b := onePlan(p, req("r01"), "configmap/b", "0000000000000005")
	r0, r1 := req("r00"), req("r01")
	p.admit(r0, r0, []*plan{a}, "s", wavesT0, false)
	if v, _, _ := p.admit(r1, r1, []*plan{b}, "s", wavesT0, true); v != admitted {
		t.Fatalf("a reader with nothing to run: %v with the one slot taken, want admitted", v)
	}
	if v, _, _ := p.admit(r1, r1, []*plan{b}, "s", wavesT0, true); v != admitted {
		t.Fatalf("again: %v", v)
	}
	// Once it has pods to start, it needs the slot like any other reader.
	if v, _, _ := p.admit(r1, r1, []*plan{b}, "s", wavesT0, false); v != waitBound {
		t.Fatalf("with pods to start and the one slot taken: %v, want waitBound", v)
	}
}
