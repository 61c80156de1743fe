package restamp

import (
	"slices"
	"time"
)

// The slots of --max-concurrent-rollouts are shared fairly across
// namespaces, as the hook's queue is (queue_fair.go): a free slot goes to
// the waiting namespace that holds the fewest, ties in turn, and within a
// namespace to its oldest waiter. A namespace that holds more slots than
// another waiting namespace is refused a free one, so no namespace gains
// more than its share while others wait. A woken waiter has its slot kept
// for it until it asks (or slotKept passes: a wake that was lost), so that
// a reader asking in between cannot take it.

// slotKept is how long a slot stays kept for a woken waiter that has not
// asked: about when it would ask again by itself.
const slotKept = waitRecheck

// slotWaiters are the readers whose wave is due but that wait for a slot,
// per namespace, oldest first; the namespaces take turns on ties.
type slotWaiters struct {
	seq   uint64
	byNS  map[string]*nsWaiters
	turns []string // namespaces with waiters; on a tie the first goes
	// woken are the waiters a slot was kept for (at most the bound's worth
	// at a time), so that counting the kept slots does not walk every
	// waiter.
	woken map[Request]*slotWait
}

// nsWaiters is one namespace's waiters: order is their arrival, and an
// entry whose seq is no longer its reader's is left behind, skipped and
// dropped as the order is compacted.
type nsWaiters struct {
	order []slotEntry
	live  map[Request]*slotWait
}

type slotEntry struct {
	r   Request
	seq uint64
}

type slotWait struct {
	seq uint64
	// woken is when a slot was kept for it; zero: none.
	woken time.Time
}

func newSlotWaiters() *slotWaiters {
	return &slotWaiters{byNS: map[string]*nsWaiters{}, woken: map[Request]*slotWait{}}
}

// add puts r at the back of its namespace's waiters; a reader waiting
// already keeps its place.
func (w *slotWaiters) add(r Request) {
	q := w.byNS[r.Namespace]
	if q == nil {
		q = &nsWaiters{live: map[Request]*slotWait{}}
		w.byNS[r.Namespace] = q
		w.turns = append(w.turns, r.Namespace)
	}
	if _, ok := q.live[r]; ok {
		return
	}
	w.seq++
	q.live[r] = &slotWait{seq: w.seq}
	q.order = append(q.order, slotEntry{r: r, seq: w.seq})
}

// remove forgets r: admitted, settled, or waiting for something else now.
// It reports whether r was waiting.
func (w *slotWaiters) remove(r Request) bool {
	q := w.byNS[r.Namespace]
	if q == nil {
		return false
	}
	if _, ok := q.live[r]; !ok {
		return false
	}
	delete(q.live, r)
	delete(w.woken, r)
	if len(q.live) == 0 {
		delete(w.byNS, r.Namespace)
		w.turns = slices.DeleteFunc(w.turns, func(ns string) bool { return ns == r.Namespace })
		return true
	}
	if len(q.order) > 2*len(q.live) {
		q.order = slices.DeleteFunc(q.order, func(e slotEntry) bool {
			l, ok := q.live[e.r]
			return !ok || l.seq != e.seq
		})
	}
	return true
}

// unblock takes r off the slot waiters, if it was one, since it waits for
// something else now: its namespace no longer counts as waiting, and a slot
// kept for it goes to the next waiter at once rather than when it lapses.
func (p *planState) unblock(r Request, now time.Time) []Request {
	if !p.blocked.remove(r) {
		return nil
	}
	return p.nextWaiters(now)
}

// waitsForWindow: r waits for its rollout window or a freeze. Only the
// clock ends that wait, so it holds no place among the slot waiters: a
// namespace whose reader waits for a window closed all weekend must not
// keep other namespaces from free slots.
func (p *planState) waitsForWindow(r Request, now time.Time) []Request {
	return p.unblock(r, now)
}

// kept reports whether a slot is kept for waiter l at now.
func (l *slotWait) kept(now time.Time) bool {
	return !l.woken.IsZero() && now.Sub(l.woken) < slotKept
}

// unwoken returns the oldest waiter of q for whom no slot is kept.
func (q *nsWaiters) unwoken(now time.Time) (Request, *slotWait, bool) {
	for _, e := range q.order {
		if l, ok := q.live[e.r]; ok && l.seq == e.seq && !l.kept(now) {
			return e.r, l, true
		}
	}
	return Request{}, nil, false
}

// load counts the slots each namespace takes at now: its rollouts in flight
// that start pods (a light one takes none), and the slots kept for its woken
// waiters, but for except's (the reader asking: the slot is kept for it).
func (p *planState) load(now time.Time, except Request) (map[string]int, int) {
	per := map[string]int{}
	total := 0
	for r, f := range p.flights {
		if !f.light {
			per[r.Namespace]++
			total++
		}
	}
	for r, l := range p.blocked.woken {
		switch {
		case !l.kept(now):
			delete(p.blocked.woken, r)
		case r != except:
			per[r.Namespace]++
			total++
		}
	}
	return per, total
}

// slotFor reports whether r may take a slot of the bound at now: one is
// free, and no other namespace with a waiter no slot is kept for holds fewer
// than r's. A reader in flight already needs one like any other: its
// re-stamp is a new rollout, and its current one holds its slot until it
// ends.
func (p *planState) slotFor(r Request, now time.Time) bool {
	if p.maxInFlight <= 0 {
		return true
	}
	per, total := p.load(now, r)
	if total >= p.maxInFlight {
		return false
	}
	mine := per[r.Namespace]
	for ns, q := range p.blocked.byNS {
		if ns == r.Namespace || per[ns] >= mine {
			continue
		}
		if _, _, ok := q.unwoken(now); ok {
			return false
		}
	}
	return true
}

// nextWaiters keeps the free slots at now for as many waiters, each for the
// waiting namespace holding the fewest (ties in turn), and returns them.
// Without a bound every waiter goes.
func (p *planState) nextWaiters(now time.Time) []Request {
	w := p.blocked
	if p.maxInFlight <= 0 {
		var rs []Request
		for _, q := range w.byNS {
			for r := range q.live {
				rs = append(rs, r)
			}
		}
		p.blocked = newSlotWaiters()
		return rs
	}
	per, total := p.load(now, Request{})
	var rs []Request
	for free := p.maxInFlight - total; free > 0; free-- {
		best := -1
		for i, ns := range w.turns {
			if _, _, ok := w.byNS[ns].unwoken(now); ok && (best < 0 || per[ns] < per[w.turns[best]]) {
				best = i
			}
		}
		if best < 0 {
			break
		}
		ns := w.turns[best]
		r, l, _ := w.byNS[ns].unwoken(now)
		l.woken = now
		w.woken[r] = l
		per[ns]++
		rs = append(rs, r)
		// Its turn is taken: on the next tie another namespace goes.
		w.turns = append(slices.Delete(w.turns, best, best+1), ns)
	}
	return rs
}
