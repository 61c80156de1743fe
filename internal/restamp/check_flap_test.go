package restamp

import (
	"fmt"
	"testing"
	"time"

	"github.com/confighash/confighash/internal/contract"
)

// t0 has a fraction of a second, as the clock has: the hold annotation
// keeps whole seconds, and a test at a whole second cannot tell.
var t0 = time.Date(2030, 1, 2, 3, 4, 5, 123456789, time.UTC)

// at is a time offset from t0.
func at(d time.Duration) time.Time { return t0.Add(d) }

// testFlapEntries is the guard's cap in the tests that do not test it.
const testFlapEntries = 1000

func testFlapConfig() Options {
	return Options{FlapLimit: 5, FlapWindow: 10 * time.Minute, FlapQuiet: 30 * time.Second, FlapMaxQuiet: 4 * time.Minute}
}

// flapSim drives one workload through the guard the way the hook does: a
// look one coalescing window after each change of its source and at each
// requeue, one queue entry due at the earliest time asked for. The
// workload's stamp and hold annotation are plain fields; a leader change
// replaces the guard and keeps them, as the cluster does.
type flapSim struct {
	g        *flapGuard
	w        workloadKey
	content  string         // what the source gives now
	stamp    string         // what the workload is stamped with
	hold     *contract.Hold // what its annotation carries
	restamps []time.Duration
	holds    []contract.Hold // every hold the workload was made to carry
	due      time.Duration
	queued   bool
}

func (s *flapSim) enqueue(at time.Duration) {
	if !s.queued || at < s.due {
		s.due, s.queued = at, true
	}
}

// reconcile is what Reconcile does with the guard's decisions.
func (s *flapSim) reconcile(now time.Duration) {
	s.queued = false
	v := s.g.look(s.w, s.content, s.content != s.stamp, s.hold, at(now))
	switch {
	case v.Hold != nil:
		if s.hold == nil || *s.hold != *v.Hold {
			h := *v.Hold
			s.hold = &h
			s.holds = append(s.holds, h)
		}
		s.enqueue(now + max(v.Retry, minHoldRetry))
	case v.Release && s.content == s.stamp:
		s.hold = nil
		s.g.released(s.w, at(now))
	case s.content != s.stamp:
		s.stamp, s.hold = s.content, nil
		s.restamps = append(s.restamps, now)
		s.g.restamped(s.w, at(now))
	}
}

// run flips the source every period for flapFor, replacing the guard at
// each of leaderChanges (whose start-up replay then looks at the
// workload), and goes on until until.
func (s *flapSim) run(period, flapFor, until time.Duration, leaderChanges ...time.Duration) {
	const coalesce, tick = time.Second, 100 * time.Millisecond
	flips := 0
	for now := time.Duration(0); now <= until; now += tick {
		for _, lc := range leaderChanges {
			if now == lc {
				s.g = newFlapGuard(s.g.opts, s.g.maxEntries)
				s.enqueue(now + coalesce)
			}
		}
		if now < flapFor && now%period == 0 {
			flips++
			s.content = fmt.Sprintf("content-%d", flips)
			s.enqueue(now + coalesce)
		}
		if s.queued && s.due <= now {
			s.reconcile(now)
		}
	}
}

func newFlapSim(cfg Options) *flapSim {
	return &flapSim{g: newFlapGuard(cfg, testFlapEntries), w: keyOf(req("web")), content: "content-0", stamp: "content-0"}
}

// A Secret flipped every 2 s for 3 minutes, as in the issue (and the e2e
// spec): the old sliding window re-stamped it every time the oldest entry
// left the window, and a leader change started it over.
func TestFlapGuardFlappingSourceRollsBoundedTimes(t *testing.T) {
	cfg := testFlapConfig()
	tests := map[string]struct {
		leaderChanges []time.Duration
	}{
		"one leader":                  {},
		"leader change in the middle": {leaderChanges: []time.Duration{90 * time.Second}},
		"two leader changes":          {leaderChanges: []time.Duration{40 * time.Second, 2 * time.Minute}},
		"leader change after the end": {leaderChanges: []time.Duration{3*time.Minute + 10*time.Second}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			s := newFlapSim(cfg)
			s.run(2*time.Second, 3*time.Minute, 15*time.Minute, tc.leaderChanges...)
			t.Logf("re-stamps at %v", s.restamps)
			// The limit, then the last content once.
			if got, want := len(s.restamps), cfg.FlapLimit+1; got != want {
				t.Errorf("%d re-stamps, want %d: %v", got, want, s.restamps)
			}
			if s.stamp != s.content {
				t.Errorf("ended on %q, want the last content %q", s.stamp, s.content)
			}
			if s.hold != nil {
				t.Errorf("still carries hold %v", s.hold)
			}
			// The last re-stamp waits for the quiet time after the last
			// change (a new leader counts from its own start if later).
			last := s.restamps[len(s.restamps)-1]
			if lastFlip := 3*time.Minute - 2*time.Second; last < lastFlip+cfg.FlapQuiet {
				t.Errorf("last re-stamp at %v, before the sources were quiet for %v (last change %v)", last, cfg.FlapQuiet, lastFlip)
			}
		})
	}
}

// A source that never stops flapping rolls its readers Limit times, not
// Limit times per window.
func TestFlapGuardFlappingForeverStaysHeld(t *testing.T) {
	cfg := testFlapConfig()
	s := newFlapSim(cfg)
	s.run(2*time.Second, 2*time.Hour, 2*time.Hour, 30*time.Minute)
	if len(s.restamps) != cfg.FlapLimit {
		t.Errorf("%d re-stamps in 2 h of flapping, want %d: %v", len(s.restamps), cfg.FlapLimit, s.restamps)
	}
	if s.hold == nil {
		t.Error("not held at the end")
	}
}

// Bursts of flapping with pauses longer than the quiet time: each hold
// that follows the last within the window doubles the quiet time, up to
// the cap, so later bursts roll nothing until a pause outlasts it.
func TestFlapGuardBackoff(t *testing.T) {
	cfg := testFlapConfig() // quiet 30s, cap 4m
	g := newFlapGuard(cfg, testFlapEntries)
	w := keyOf(req("web"))
	for i := range cfg.FlapLimit {
		if v := g.look(w, fmt.Sprint(i), true, nil, at(time.Duration(i)*time.Second)); v.Hold != nil {
			t.Fatalf("held at re-stamp %d", i)
		}
		g.restamped(w, at(time.Duration(i)*time.Second))
	}
	now := at(10 * time.Second)
	wantQuiet := []time.Duration{30 * time.Second, time.Minute, 2 * time.Minute, 4 * time.Minute, 4 * time.Minute}
	for level, quiet := range wantQuiet {
		v := g.look(w, "burst", true, nil, now)
		if v.Hold == nil || !v.Started || v.Hold.Level != min(level, 3) || v.Hold.Quiet != quiet || v.Retry != quiet {
			t.Fatalf("hold %d: decision %+v hold %+v, want a new hold of %v", level, v, v.Hold, quiet)
		}
		// Still held just before the quiet time is up, released after.
		if v := g.look(w, "burst", true, nil, now.Add(quiet-time.Second)); v.Hold == nil {
			t.Fatalf("hold %d released early", level)
		}
		now = now.Add(quiet)
		if v := g.look(w, "burst", true, nil, now); !v.Release {
			t.Fatalf("hold %d not released after %v: %+v", level, quiet, v)
		}
		g.restamped(w, now)
		now = now.Add(time.Minute) // the next burst, within the window
	}
	// A whole window without a re-stamp or a hold: a fresh start.
	now = now.Add(cfg.FlapWindow)
	if v := g.look(w, "calm", true, nil, now); v.Hold != nil {
		t.Errorf("held after a calm window: %+v", v.Hold)
	}
}

func TestFlapGuardKeyedByWorkload(t *testing.T) {
	recheck := func(r Request) Request { r.Recheck = true; return r }
	tests := map[string]struct {
		second Request
		wantOK bool
	}{
		"same workload, re-check": {second: recheck(req("a")), wantOK: false},
		"same workload":           {second: req("a"), wantOK: false},
		"other name":              {second: req("b"), wantOK: true},
		"other kind":              {second: Request{KindName: "StatefulSet", NamespacedName: req("a").NamespacedName}, wantOK: true},
		"other namespace":         {second: reqIn("other", "a"), wantOK: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			cfg := testFlapConfig()
			cfg.FlapLimit = 2
			g := newFlapGuard(cfg, testFlapEntries)
			// Re-stamps of a, alternately from a config change and a re-check:
			// one budget.
			g.restamped(keyOf(req("a")), at(0))
			g.restamped(keyOf(recheck(req("a"))), at(time.Second))
			v := g.look(keyOf(tc.second), "new", true, nil, at(2*time.Second))
			if ok := v.Hold == nil; ok != tc.wantOK {
				t.Errorf("re-stamp of %v allowed = %v, want %v", tc.second, ok, tc.wantOK)
			}
		})
	}
}

// A re-check and a change of the same workload, alternating: one limit.
func TestFlapGuardRecheckDoesNotDoubleTheLimit(t *testing.T) {
	cfg := testFlapConfig()
	g := newFlapGuard(cfg, testFlapEntries)
	restamps := 0
	for i := range 4 * cfg.FlapLimit {
		r := req("web")
		r.Recheck = i%2 == 1
		now := at(time.Duration(i) * time.Second)
		if v := g.look(keyOf(r), fmt.Sprint(i), true, nil, now); v.Hold == nil {
			g.restamped(keyOf(r), now)
			restamps++
		}
	}
	if restamps != cfg.FlapLimit {
		t.Errorf("%d re-stamps, want %d", restamps, cfg.FlapLimit)
	}
}

// A new leader, or this one after forgetting the workload, holds a
// workload that carries a hold, and counts the quiet time from its own
// first look.
func TestFlapGuardHonoursStoredHold(t *testing.T) {
	cfg := testFlapConfig()
	stored := &contract.Hold{Since: at(-time.Hour), Level: 2, Quiet: 2 * time.Minute}
	tests := map[string]struct {
		stored    *contract.Hold
		stale     bool
		wantLevel int
		wantQuiet time.Duration
	}{
		"stale stamp":                         {stored: stored, stale: true, wantLevel: 2, wantQuiet: 2 * time.Minute},
		"stamp current: hold runs its course": {stored: stored, stale: false, wantLevel: 2, wantQuiet: 2 * time.Minute},
		"level above the cap":                 {stored: &contract.Hold{Since: at(-time.Hour), Level: 40, Quiet: time.Hour}, stale: true, wantLevel: 3, wantQuiet: 4 * time.Minute},
		"unreadable: first level":             {stored: &contract.Hold{Since: at(0)}, stale: true, wantLevel: 0, wantQuiet: 30 * time.Second},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			g := newFlapGuard(cfg, testFlapEntries) // nothing remembered, as after a leader change
			w := keyOf(req("web"))
			v := g.look(w, "x", tc.stale, tc.stored, at(0))
			if v.Hold == nil || v.Started || v.Hold.Level != tc.wantLevel || v.Hold.Quiet != tc.wantQuiet || !v.Hold.Since.Equal(tc.stored.Since) {
				t.Fatalf("decision %+v hold %+v; want held at level %d for %v since %v", v, v.Hold, tc.wantLevel, tc.wantQuiet, tc.stored.Since)
			}
			// A change during the hold restarts the quiet time.
			if v := g.look(w, "y", true, tc.stored, at(tc.wantQuiet-time.Second)); v.Hold == nil || v.Retry != tc.wantQuiet {
				t.Fatalf("after a change: %+v, want held for %v more", v, tc.wantQuiet)
			}
			if v := g.look(w, "y", true, tc.stored, at(2*tc.wantQuiet-2*time.Second)); v.Hold == nil {
				t.Fatalf("released before the sources were quiet for %v", tc.wantQuiet)
			}
			if v := g.look(w, "y", true, tc.stored, at(2*tc.wantQuiet-time.Second)); !v.Release {
				t.Fatalf("not released once quiet: %+v", v)
			}
		})
	}
}

// Once the guard ends a hold, a cache that still shows the annotation must
// not start it again; a later hold (another Since) is honoured.
func TestFlapGuardIgnoresTheHoldItEnded(t *testing.T) {
	cfg := testFlapConfig()
	g := newFlapGuard(cfg, testFlapEntries)
	w := keyOf(req("web"))
	stored := annotated(t, contract.Hold{Since: at(0).Truncate(time.Second), Level: 0, Quiet: cfg.FlapQuiet})
	if v := g.look(w, "x", true, stored, at(0)); v.Hold == nil {
		t.Fatal("stored hold not honoured")
	}
	if v := g.look(w, "x", true, stored, at(cfg.FlapQuiet)); !v.Release {
		t.Fatal("not released")
	}
	g.restamped(w, at(cfg.FlapQuiet))
	if v := g.look(w, "x", false, stored, at(cfg.FlapQuiet+time.Second)); v.Hold != nil {
		t.Errorf("the ended hold, seen again in a stale cache, started a new one: %+v", v.Hold)
	}
	later := annotated(t, contract.Hold{Since: at(time.Hour), Quiet: cfg.FlapQuiet})
	if v := g.look(w, "x", false, later, at(time.Hour)); v.Hold == nil {
		t.Error("a later hold was not honoured")
	}
}

// The same for a hold the guard started itself, at a time with a fraction
// of a second: the annotation it wrote keeps whole seconds, and a stale
// read of it just after the release must not hold the workload again for
// a full quiet time.
func TestFlapGuardIgnoresTheHoldItStartedAndEnded(t *testing.T) {
	cfg := testFlapConfig()
	g := newFlapGuard(cfg, testFlapEntries)
	w := keyOf(req("web"))
	for i := range cfg.FlapLimit {
		g.restamped(w, at(time.Duration(i)*time.Second))
	}
	start := at(time.Duration(cfg.FlapLimit) * time.Second)
	v := g.look(w, "x", true, nil, start)
	if !v.Started {
		t.Fatalf("no hold started: %+v", v)
	}
	stored := annotated(t, *v.Hold) // what the workload now carries
	if v := g.look(w, "x", true, stored, start.Add(time.Second)); v.Hold == nil || v.Started {
		t.Fatalf("its own hold, read back: %+v", v)
	}
	end := start.Add(cfg.FlapQuiet)
	if v := g.look(w, "x", true, stored, end); !v.Release {
		t.Fatalf("not released: %+v", v)
	}
	g.restamped(w, end)
	if v := g.look(w, "x", false, stored, end.Add(time.Second)); v.Hold != nil {
		t.Errorf("the hold it started and ended, seen again in a stale cache, started a new one: %+v", v.Hold)
	}
}

// annotated is h as a workload carries it: written to the annotation and
// read back.
func annotated(t *testing.T, h contract.Hold) *contract.Hold {
	t.Helper()
	got, err := contract.ParseHold(h.String())
	if err != nil {
		t.Fatal(err)
	}
	return &got
}

// Sources that flap back to the stamped content end the hold without a
// re-stamp.
func TestFlapGuardReleaseWithoutRestamp(t *testing.T) {
	cfg := testFlapConfig()
	s := newFlapSim(cfg)
	s.run(2*time.Second, 3*time.Minute, 10*time.Minute)
	stampAfter := s.stamp
	n := len(s.restamps)
	// Flap again, ending on the stamped content.
	s.content = "other"
	s.reconcile(11 * time.Minute)
	if s.hold == nil {
		t.Fatal("a change within the window of the last hold was not held")
	}
	s.content = stampAfter
	for now := 11 * time.Minute; now < 20*time.Minute; now += time.Second {
		if s.queued && s.due <= now {
			s.reconcile(now)
		}
	}
	if len(s.restamps) != n || s.stamp != stampAfter || s.hold != nil {
		t.Errorf("re-stamps %d (want %d), stamp %q, hold %v; want the hold ended with no re-stamp", len(s.restamps), n, s.stamp, s.hold)
	}
}

func TestFlapGuardMemoryIsBounded(t *testing.T) {
	t.Run("sweep forgets workloads with nothing to remember", func(t *testing.T) {
		cfg := testFlapConfig()
		g := newFlapGuard(cfg, testFlapEntries)
		for i := range 500 {
			g.restamped(keyOf(req(fmt.Sprint(i))), at(time.Duration(i)*time.Millisecond))
		}
		held := keyOf(req("held"))
		for i := range cfg.FlapLimit {
			g.restamped(held, at(time.Duration(i)*time.Millisecond))
		}
		if v := g.look(held, "x", true, nil, at(time.Second)); v.Hold == nil {
			t.Fatal("not held")
		}
		// Two windows on, anything looked at sweeps the rest away; the
		// held workload stays.
		g.look(keyOf(req("other")), "x", false, nil, at(2*cfg.FlapWindow))
		if len(g.entries) != 1 || !g.holding(held) {
			t.Errorf("%d entries after the sweep, want 1 (the held one)", len(g.entries))
		}
		// A look at a current workload with nothing to remember adds nothing.
		g.look(keyOf(req("never")), "x", false, nil, at(2*cfg.FlapWindow))
		if _, ok := g.entries[keyOf(req("never"))]; ok {
			t.Error("a look at a current workload added an entry")
		}
	})
	t.Run("cap", func(t *testing.T) {
		cfg := testFlapConfig()
		const maxEntries = 100
		g := newFlapGuard(cfg, maxEntries)
		peak := 0
		// A fan-out to 10 000 readers within one window.
		for i := range 10000 {
			w := keyOf(req(fmt.Sprint(i)))
			now := at(time.Duration(i) * time.Millisecond)
			if v := g.look(w, "x", true, nil, now); v.Hold == nil {
				g.restamped(w, now)
			}
			peak = max(peak, len(g.entries))
		}
		if peak > maxEntries {
			t.Errorf("%d entries at the peak, cap %d", peak, maxEntries)
		}
	})
}

// TestFlapGuardQuiet: the quiet time doubles per level up to its cap. A cap
// below the quiet time does not get this far: Validate refuses it
// (TestValidate).
func TestFlapGuardQuiet(t *testing.T) {
	tests := map[string]struct {
		quiet, maxQuiet time.Duration
		level           int
		want            time.Duration
		wantMaxLevel    int
	}{
		"level 0":             {quiet: time.Minute, maxQuiet: 30 * time.Minute, level: 0, want: time.Minute, wantMaxLevel: 5},
		"level 3":             {quiet: time.Minute, maxQuiet: 30 * time.Minute, level: 3, want: 8 * time.Minute, wantMaxLevel: 5},
		"capped":              {quiet: time.Minute, maxQuiet: 30 * time.Minute, level: 5, want: 30 * time.Minute, wantMaxLevel: 5},
		"huge level, no wrap": {quiet: time.Minute, maxQuiet: 30 * time.Minute, level: 200, want: 30 * time.Minute, wantMaxLevel: 5},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			g := newFlapGuard(Options{FlapLimit: 1, FlapWindow: time.Minute, FlapQuiet: tc.quiet, FlapMaxQuiet: tc.maxQuiet}, testFlapEntries)
			if got := g.quiet(tc.level); got != tc.want {
				t.Errorf("quiet(%d) = %v, want %v", tc.level, got, tc.want)
			}
			if got := g.maxLevel(); got != tc.wantMaxLevel {
				t.Errorf("maxLevel = %d, want %d", got, tc.wantMaxLevel)
			}
		})
	}
}
