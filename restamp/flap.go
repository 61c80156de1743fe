package restamp

import (
	"sync"
	"time"
)

// flapGuard counts re-stamps per workload over a sliding window. A workload
// re-stamped limit times within window is held: a config that flaps (a
// certificate rewritten in a loop, two controllers fighting over a
// ConfigMap) must not turn into thousands of ReplicaSets.
type flapGuard struct {
	limit  int
	window time.Duration

	mu      sync.Mutex
	history map[Request][]time.Time
}

func newFlapGuard(limit int, window time.Duration) *flapGuard {
	return &flapGuard{limit: limit, window: window, history: map[Request][]time.Time{}}
}

// allow reports whether r may be re-stamped at now. When it may not, retry
// is when the oldest re-stamp leaves the window, which is when the hold is
// re-checked: if the sources have been stable since, the stamp then written
// is their final state.
func (g *flapGuard) allow(r Request, now time.Time) (ok bool, retry time.Duration) {
	g.mu.Lock()
	defer g.mu.Unlock()
	h := g.recent(r, now)
	if len(h) < g.limit {
		return true, 0
	}
	return false, h[0].Add(g.window).Sub(now)
}

// record notes a re-stamp of r at now.
func (g *flapGuard) record(r Request, now time.Time) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.history[r] = append(g.recent(r, now), now)
}

// recent drops entries older than the window; it keeps the map from growing
// with workloads that stopped changing. Callers hold mu.
func (g *flapGuard) recent(r Request, now time.Time) []time.Time {
	h := g.history[r]
	i := 0
	for i < len(h) && now.Sub(h[i]) >= g.window {
		i++
	}
	h = h[i:]
	if len(h) == 0 {
		delete(g.history, r)
		return nil
	}
	g.history[r] = h
	return h
}
