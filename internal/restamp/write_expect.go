package restamp

import (
	"sync"
	"time"
)

// MaxWriteExpectations caps the workloads whose own re-stamp the hook waits
// to see in its cache; see expectations.
const MaxWriteExpectations = 20000

// cacheLagRetry is how soon a reconcile that read a copy older than its own
// write runs again. The informer usually delivers the write within a few
// milliseconds; a short requeue keeps that wait off the wave's path.
const cacheLagRetry = 50 * time.Millisecond

// cacheLagMax is how long a copy older than the hook's own write is taken
// for cache lag. Past it the expectation is dropped and the reconcile runs
// as it would without one (the optimistic lock still refuses a stale write),
// so a cache that never catches up costs a conflict, not a stuck workload.
const cacheLagMax = 10 * time.Second

// expectations remembers, for each workload the hook has just re-stamped,
// the resourceVersion it patched from, until the cache shows another copy
// (the pattern of the ReplicaSet controller's expectations).
//
// Why: a workload queued again while it is being re-stamped (a wave's wake,
// its own status change) runs again at once, and then often reads the copy
// from before the write: the cache has not delivered the write yet. That
// copy still looks stale, so the reconcile would be admitted to its wave a
// second time and patch again; the optimistic lock is then certain to
// refuse the patch (the hook's own write moved the resourceVersion), and the
// refusal undid the wave's record of the first re-stamp, so the wave waited
// for the error's backoff. On the 200-reader fan-out in waves (make bench)
// that was 42 to 48 conflicts a run, and most of its time. Skipping that one
// copy changes no decision: every write made from it would be refused.
//
// A nil *expectations expects nothing.
type expectations struct {
	mu  sync.Mutex
	old map[Request]expected
	max int
	now func() time.Time
}

type expected struct {
	from string // the resourceVersion the re-stamp was patched from
	at   time.Time
}

func newExpectations(max int, now func() time.Time) *expectations {
	return &expectations{old: map[Request]expected{}, max: max, now: now}
}

// wrote records that r's re-stamp, patched from resourceVersion from, was
// just written. When full, expired entries go first; if none has expired,
// nothing is recorded (the reconcile then runs as without expectations).
func (e *expectations) wrote(r Request, from string) {
	if e == nil || from == "" {
		return
	}
	now := e.now()
	e.mu.Lock()
	defer e.mu.Unlock()
	if _, ok := e.old[r]; !ok && len(e.old) >= e.max {
		for k, x := range e.old {
			if now.Sub(x.at) > cacheLagMax {
				delete(e.old, k)
			}
		}
		if len(e.old) >= e.max {
			return
		}
	}
	e.old[r] = expected{from: from, at: now}
}

// lagging reports whether rv, the resourceVersion of r's cached copy, is the
// one r's last re-stamp was patched from: the cache has not delivered that
// write yet. Any other copy, or an expectation past cacheLagMax, ends the
// expectation.
func (e *expectations) lagging(r Request, rv string) bool {
	if e == nil {
		return false
	}
	now := e.now()
	e.mu.Lock()
	defer e.mu.Unlock()
	x, ok := e.old[r]
	if !ok {
		return false
	}
	if x.from == rv && now.Sub(x.at) <= cacheLagMax {
		return true
	}
	delete(e.old, r)
	return false
}
