package restamp

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

var t0 = time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)

func req(name string) Request {
	return Request{Kind: "Deployment", NamespacedName: types.NamespacedName{Namespace: "ns", Name: name}}
}

// at is a time offset from t0.
func at(d time.Duration) time.Time { return t0.Add(d) }

func TestFlapGuard(t *testing.T) {
	const window = 10 * time.Minute
	type check struct {
		at        time.Duration
		wantOK    bool
		wantRetry time.Duration
	}
	tests := map[string]struct {
		limit   int
		records []time.Duration // re-stamps of req("a"), in order
		checks  []check
	}{
		"no history": {
			limit:  3,
			checks: []check{{at: 0, wantOK: true}},
		},
		"below the limit": {
			limit:   3,
			records: []time.Duration{0, time.Minute},
			checks:  []check{{at: 2 * time.Minute, wantOK: true}},
		},
		"limit reached: retry when the oldest leaves the window": {
			limit:   3,
			records: []time.Duration{0, time.Minute, 2 * time.Minute},
			checks: []check{
				{at: 3 * time.Minute, wantOK: false, wantRetry: 7 * time.Minute},
				{at: 9*time.Minute + 59*time.Second, wantOK: false, wantRetry: time.Second},
				// Exactly one window after the oldest, it has aged out.
				{at: 10 * time.Minute, wantOK: true},
			},
		},
		"limit one": {
			limit:   1,
			records: []time.Duration{5 * time.Minute},
			checks: []check{
				{at: 5 * time.Minute, wantOK: false, wantRetry: window},
				{at: 6 * time.Minute, wantOK: false, wantRetry: 9 * time.Minute},
				{at: 15 * time.Minute, wantOK: true},
			},
		},
		"entries age out one by one": {
			limit:   2,
			records: []time.Duration{0, 4 * time.Minute, 8 * time.Minute},
			checks: []check{
				// Recording at 8m dropped nothing: three within the window.
				{at: 9 * time.Minute, wantOK: false, wantRetry: time.Minute},
				// At 10m the first has gone; 4m and 8m still count.
				{at: 10 * time.Minute, wantOK: false, wantRetry: 4 * time.Minute},
				// At 14m only 8m is left.
				{at: 14 * time.Minute, wantOK: true},
			},
		},
		"old history does not count": {
			limit:   2,
			records: []time.Duration{0, time.Minute, 20 * time.Minute},
			checks:  []check{{at: 20 * time.Minute, wantOK: true}},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			g := newFlapGuard(tc.limit, window)
			for _, r := range tc.records {
				g.record(req("a"), at(r))
			}
			// Another workload's history must not interfere.
			for range tc.limit {
				g.record(req("b"), at(0))
			}
			for _, c := range tc.checks {
				ok, retry := g.allow(req("a"), at(c.at))
				if ok != c.wantOK || retry != c.wantRetry {
					t.Errorf("allow at %v = %v, %v; want %v, %v", c.at, ok, retry, c.wantOK, c.wantRetry)
				}
			}
		})
	}
}

func TestFlapGuardKeyedByWorkload(t *testing.T) {
	tests := map[string]struct {
		r      Request
		at     time.Duration
		wantOK bool
	}{
		"same workload":      {r: req("a"), at: time.Second, wantOK: false},
		"same, just before":  {r: req("a"), at: time.Minute - time.Nanosecond, wantOK: false},
		"same, after window": {r: req("a"), at: time.Minute, wantOK: true},
		"other name":         {r: req("b"), at: time.Second, wantOK: true},
		"other kind":         {r: Request{Kind: "StatefulSet", NamespacedName: req("a").NamespacedName}, at: time.Second, wantOK: true},
		"other namespace":    {r: Request{Kind: "Deployment", NamespacedName: types.NamespacedName{Namespace: "other", Name: "a"}}, at: time.Second, wantOK: true},
		"zero request":       {r: Request{}, at: time.Second, wantOK: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			g := newFlapGuard(1, time.Minute)
			g.record(req("a"), t0)
			if ok, _ := g.allow(tc.r, at(tc.at)); ok != tc.wantOK {
				t.Errorf("allow(%v) at %v = %v, want %v", tc.r, tc.at, ok, tc.wantOK)
			}
		})
	}
}

func TestFlapGuardHistoryShrinks(t *testing.T) {
	const window = time.Minute
	g := newFlapGuard(5, window)
	for i, name := range []string{"a", "b", "c"} {
		for j := range 3 {
			g.record(req(name), at(time.Duration(i)*time.Second+time.Duration(j)*10*time.Second))
		}
	}
	if len(g.history) != 3 {
		t.Fatalf("history has %d workloads, want 3", len(g.history))
	}

	// a's entries are at 0s, 10s, 20s. At 65s the first has aged out.
	g.allow(req("a"), at(65*time.Second))
	if got := len(g.history[req("a")]); got != 2 {
		t.Errorf("after allow at 65s a has %d entries, want 2", got)
	}
	// Once every entry is out of the window, the workload leaves the map,
	// by allow as well as by record.
	g.allow(req("a"), at(2*window))
	if _, ok := g.history[req("a")]; ok {
		t.Errorf("a still in history after its entries aged out: %v", g.history[req("a")])
	}
	g.record(req("b"), at(10*window))
	if got := len(g.history[req("b")]); got != 1 {
		t.Errorf("b has %d entries after recording past its window, want 1", got)
	}
	// c is left alone until it is looked at.
	if got := len(g.history[req("c")]); got != 3 {
		t.Errorf("c has %d entries, want 3", got)
	}
	if len(g.history) != 2 {
		t.Errorf("history has %d workloads, want 2 (b, c): %v", len(g.history), g.history)
	}
	g.allow(req("c"), at(10*window))
	if len(g.history) != 1 {
		t.Errorf("history has %d workloads, want 1 (b): %v", len(g.history), g.history)
	}
	// Asking about an unknown workload adds nothing.
	g.allow(req("never"), at(10*window))
	if _, ok := g.history[req("never")]; ok || len(g.history) != 1 {
		t.Errorf("allow for an unknown workload grew the history: %v", g.history)
	}
}
