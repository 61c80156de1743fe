package restamp

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"

	"k8s.io/utils/ptr"

	"github.com/confighash/confighash/internal/contract"
)

// Planning a change checks at most planChecks readers, whatever their
// number: the others are members left for their own reconcile.
func TestPlanChecksABoundedNumberOfReaders(t *testing.T) {
	var reads atomic.Int64
	r, c := planBenchReconciler(t, 100, &reads)
	r.planner = newPlanner(16, 10, nil)
	reads.Store(0)
	pl, err := r.buildPlan(context.Background(), planKey{namespace: "ns", source: c.Source}, c)
	if err != nil {
		t.Fatal(err)
	}
	// A checksum and one content ID (one source) for each reader checked,
	// and one read of the source's window for the plan.
	if got, want := reads.Load(), int64(2*planChecks(16)+1); got > want {
		t.Errorf("planning read the source %d times, want at most %d", got, want)
	}
	if len(pl.members) != 100 || len(pl.unchecked) != 100-planChecks(16) {
		t.Errorf("%d members, %d unchecked; want 100, %d", len(pl.members), len(pl.unchecked), 100-planChecks(16))
	}
	for _, m := range pl.members[:planChecks(16)] {
		if _, ok := pl.unchecked[m]; ok {
			t.Fatalf("%s, in the first waves, was left unchecked", m.Name)
		}
	}
}

// A member planning left unchecked that its reconcile finds current (it
// never read what changed) is settled, not judged: it holds up no wave and
// takes no slot.
func TestUncheckedCurrentMemberIsSettled(t *testing.T) {
	n := planChecks(8) + 4 // 20
	f := newWavesFixture(t, n)
	last := "d9" // last of d0..d19 in the waves' order, by name
	d := f.get(t, last)
	d.Spec.Template.Annotations[contract.ChecksumAnnotation] = f.cur
	f.put(t, d)
	f.reconcile(t, "d0")
	pl, ok := f.r.planner.state.plans[planKey{namespace: "ns", source: "configmap/app"}]
	if !ok {
		t.Fatal("no plan")
	}
	lr := req(last)
	if _, ok := pl.unchecked[lr]; !ok {
		t.Fatalf("%s is not an unchecked member", last)
	}
	f.reconcile(t, last)
	if _, ok := f.r.planner.inFlight(lr); ok || !pl.done[lr] || pl.gone[lr] {
		t.Fatalf("the current member: in flight %v, done %v, gone %v; want settled", ok, pl.done[lr], pl.gone[lr])
	}
}

// A reader waiting for its wave wakes, as re-checks, the unchecked members
// of earlier waves that have not asked (a plan rebuilt after they settled
// would otherwise wait on them for ever); each is woken once a while.
func TestWaitingReaderWakesUncheckedMembers(t *testing.T) {
	var woken []Request
	p := newPlanner(2, 0, func(r Request) { woken = append(woken, r) })
	ms := members(8)
	for i := 4; i < 8; i++ {
		ms[i].unchecked = true
	}
	pl := p.install(shared, change1, ms, wavesT0, 0)
	for i := range 4 {
		p.settled(req(fmt.Sprintf("r%02d", i)))
	}
	woken = nil
	r7 := req("r07")
	if v, _, _ := p.admit(r7, r7, []*plan{pl}, "s", wavesT0, false); v != waitWave {
		t.Fatalf("r07: %v, want waitWave", v)
	}
	var names []string
	for _, w := range woken {
		if !w.Recheck {
			t.Fatalf("%s woken as a live change, want a re-check", w.Name)
		}
		names = append(names, w.Name)
	}
	// Waves of 1, 2, 2, 2, 1: r04 to r06 are in waves before r07's.
	if !slices.Equal(names, []string{"r04", "r05", "r06"}) {
		t.Fatalf("woke %v, want the unchecked members of earlier waves", names)
	}
	woken = nil
	p.admit(r7, r7, []*plan{pl}, "s", wavesT0, false)
	if len(woken) != 0 {
		t.Fatalf("woke %v again at once", woken)
	}
	for _, name := range names {
		p.settled(req(name))
	}
	if v, _, _ := p.admit(r7, r7, []*plan{pl}, "s", wavesT0, false); v != admitted {
		t.Fatalf("r07 once the unchecked ones settled: %v", v)
	}
}

// A reader that starts no pod goes at once, even when it comes past the
// readers planning checks: telling that it starts none costs no check, so
// the bound must not make it a member that waits for the waves.
func TestIdleReaderPastTheChecksGoesAtOnce(t *testing.T) {
	n := planChecks(8) + 4 // 20
	f := newWavesFixture(t, n)
	last := "d9" // last of d0..d19 in the waves' order, by name
	d := f.get(t, last)
	d.Spec.Replicas = ptr.To[int32](0)
	f.put(t, d)
	f.reconcile(t, "d0")
	f.reconcile(t, last)
	if got := f.get(t, last).Spec.Template.Annotations[contract.ChecksumAnnotation]; got != f.cur {
		t.Fatalf("%s (0 replicas) has stamp %q, want %q at once", last, got, f.cur)
	}
}
