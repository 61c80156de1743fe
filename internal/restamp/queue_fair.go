package restamp

import (
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"
)

// newFairQueue is the hook's work queue (controller.Options.NewQueue): the
// client-go rate-limiting, delaying queue with its usual semantics (one
// entry per request, due at the earliest time asked for; a request being
// reconciled is not handed out again until it is done, and is queued again
// then if it was added meanwhile; metrics under name), but it hands out
// ready requests round-robin over namespaces (namespaceRing) instead of
// first in, first out. So a namespace whose sources change in a flood, or
// whose workloads are slow to check, delays a change in another namespace
// by at most one request per namespace with work ready, not by its whole
// backlog.
func newFairQueue(name string, rl workqueue.TypedRateLimiter[Request]) workqueue.TypedRateLimitingInterface[Request] {
	return newFairQueueWithClock(name, rl, clock.RealClock{})
}

func newFairQueueWithClock(name string, rl workqueue.TypedRateLimiter[Request], clk clock.WithTicker) workqueue.TypedRateLimitingInterface[Request] {
	ready := workqueue.NewTypedWithConfig(workqueue.TypedQueueConfig[Request]{
		Name: name, Clock: clk, Queue: newNamespaceRing(),
	})
	delaying := workqueue.NewTypedDelayingQueueWithConfig(workqueue.TypedDelayingQueueConfig[Request]{
		Name: name, Clock: clk, Queue: ready,
	})
	return workqueue.NewTypedRateLimitingQueueWithConfig(rl, workqueue.TypedRateLimitingQueueConfig[Request]{
		Name: name, Clock: clk, DelayingQueue: delaying,
	})
}

// namespaceRing orders the ready requests of the hook's queue: each
// namespace with ready requests takes its turn, and within one namespace
// requests go first in, first out, live changes before re-checks. It implements workqueue.Queue, whose
// owner dedups requests, tracks the ones in progress and serialises every
// call, so it keeps no set and no lock of its own. Every operation is O(1)
// amortised.
type namespaceRing struct {
	queues map[string]*nsQueue // namespace → its ready requests
	turns  fifo[string]        // the namespaces with ready requests, next first
	n      int
}

// nsQueue is one namespace's ready requests: those for a change seen live
// go before re-checks (Request.Recheck: the start-up replay, a template
// write), as controller-runtime's queue puts its initial list last, so that
// a restart's replay of a large namespace does not delay a change in it.
type nsQueue struct {
	live, recheck fifo[Request]
}

func (q *nsQueue) len() int { return q.live.len() + q.recheck.len() }

func (q *nsQueue) push(req Request) {
	if req.Recheck {
		q.recheck.push(req)
		return
	}
	q.live.push(req)
}

func (q *nsQueue) pop() Request {
	if q.live.len() > 0 {
		return q.live.pop()
	}
	return q.recheck.pop()
}

func newNamespaceRing() *namespaceRing {
	return &namespaceRing{queues: map[string]*nsQueue{}}
}

// Touch is called when a queued request is added again; its place stands.
func (r *namespaceRing) Touch(Request) {}

// Push queues req behind the other ready requests of its namespace. A
// namespace that had none takes its turn after every namespace that has.
func (r *namespaceRing) Push(req Request) {
	q := r.queues[req.Namespace]
	if q == nil {
		q = &nsQueue{}
		r.queues[req.Namespace] = q
		r.turns.push(req.Namespace)
	}
	q.push(req)
	r.n++
}

func (r *namespaceRing) Len() int { return r.n }

// Pop hands out the oldest ready request of the namespace whose turn it
// is (a live change before any re-check), and passes the turn on. The queue's owner calls it only when Len is
// not zero.
func (r *namespaceRing) Pop() Request {
	ns := r.turns.pop()
	q := r.queues[ns]
	req := q.pop()
	r.n--
	if q.len() > 0 {
		r.turns.push(ns)
	} else {
		delete(r.queues, ns)
	}
	return req
}

// fifo is a first-in, first-out queue over a slice whose consumed front is
// dropped once it outweighs the rest.
type fifo[T any] struct {
	items []T
	head  int
}

func (f *fifo[T]) push(v T) { f.items = append(f.items, v) }

func (f *fifo[T]) len() int { return len(f.items) - f.head }

func (f *fifo[T]) pop() T {
	var zero T
	v := f.items[f.head]
	f.items[f.head] = zero // let go of what it referenced
	f.head++
	if f.head > len(f.items)/2 {
		f.items = append(f.items[:0], f.items[f.head:]...)
		f.head = 0
	}
	return v
}
