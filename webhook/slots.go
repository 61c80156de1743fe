package webhook

import (
	"context"
	"errors"
	"sync"
	"time"
)

// errNoSlot is a wait for a slot that ran out of time.
var errNoSlot = errors.New("no free slot")

// slots are the requests handled at once, given out fairly across
// namespaces: while requests wait, a freed slot goes to the namespace
// after the last one served that has a request waiting, and within a
// namespace to the one that has waited longest. A namespace that sends
// requests faster than they are answered then delays another's by about
// one handling each, however many of its own it has queued; first come,
// first served, its queue would be every namespace's.
type slots struct {
	mu      sync.Mutex
	free    int
	waiting map[string][]*slotWait
	turns   []string // namespaces with requests waiting, next first
}

type slotWait struct {
	granted chan struct{}
}

func newSlots(n int) *slots {
	return &slots{free: n, waiting: map[string][]*slotWait{}}
}

// take waits up to wait for a slot for a request, and returns the
// function that gives it back; errNoSlot when none came in time, ctx's
// error when ctx ended first. namespace says whose turn the request waits
// in; it is asked only when no slot is free.
func (s *slots) take(ctx context.Context, namespace func() string, wait time.Duration) (func(), error) {
	s.mu.Lock()
	ok := s.grab()
	s.mu.Unlock()
	if ok {
		return s.give, nil
	}
	return s.await(ctx, namespace(), wait)
}

// grab takes a free slot if no request waits for one. s.mu is held.
func (s *slots) grab() bool {
	if s.free > 0 && len(s.turns) == 0 {
		s.free--
		return true
	}
	return false
}

// await queues a request about namespace for a slot, unless one came free.
func (s *slots) await(ctx context.Context, namespace string, wait time.Duration) (func(), error) {
	s.mu.Lock()
	if s.grab() {
		s.mu.Unlock()
		return s.give, nil
	}
	w := &slotWait{granted: make(chan struct{})}
	if len(s.waiting[namespace]) == 0 {
		s.turns = append(s.turns, namespace)
	}
	s.waiting[namespace] = append(s.waiting[namespace], w)
	s.mu.Unlock()

	timer := time.NewTimer(wait)
	defer timer.Stop()
	var err error
	select {
	case <-w.granted:
		return s.give, nil
	case <-timer.C:
		err = errNoSlot
	case <-ctx.Done():
		err = ctx.Err()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	select {
	case <-w.granted:
		// Granted as the wait ended: pass it on.
		s.handOn()
		return nil, err
	default:
	}
	s.drop(namespace, w)
	return nil, err
}

// give returns a slot.
func (s *slots) give() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.handOn()
}

// handOn gives a free slot to the next namespace's longest waiting
// request, or keeps it free. s.mu is held.
func (s *slots) handOn() {
	if len(s.turns) == 0 {
		s.free++
		return
	}
	ns := s.turns[0]
	q := s.waiting[ns]
	w := q[0]
	q[0] = nil
	if q = q[1:]; len(q) > 0 {
		s.waiting[ns] = q
		s.turns = append(s.turns[1:], ns)
	} else {
		delete(s.waiting, ns)
		s.turns = s.turns[1:]
	}
	close(w.granted)
}

// drop removes w, which gave up, from namespace's queue. s.mu is held.
func (s *slots) drop(namespace string, w *slotWait) {
	q := s.waiting[namespace]
	for i, o := range q {
		if o == w {
			q = append(q[:i], q[i+1:]...)
			break
		}
	}
	if len(q) > 0 {
		s.waiting[namespace] = q
		return
	}
	delete(s.waiting, namespace)
	for i, ns := range s.turns {
		if ns == namespace {
			s.turns = append(s.turns[:i], s.turns[i+1:]...)
			break
		}
	}
}
