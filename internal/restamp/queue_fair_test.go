package restamp

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"k8s.io/client-go/util/workqueue"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
)

// take takes n requests out of q, marking each done.
func take(q workqueue.TypedInterface[Request], n int) []string {
	var got []string
	for range n {
		r, _ := q.Get()
		got = append(got, r.Namespace+"/"+r.Name)
		q.Done(r)
	}
	return got
}

func testQueues(t *testing.T) map[string]workqueue.TypedRateLimitingInterface[Request] {
	rl := func() workqueue.TypedRateLimiter[Request] {
		return workqueue.DefaultTypedControllerRateLimiter[Request]()
	}
	qs := map[string]workqueue.TypedRateLimitingInterface[Request]{
		"fair": newFairQueue("", rl()),
		// The queues the hook had before: controller-runtime's default,
		// and client-go's.
		"priority": priorityqueue.New("", func(o *priorityqueue.Opts[Request]) { o.RateLimiter = rl() }),
		"fifo":     workqueue.NewTypedRateLimitingQueue(rl()),
	}
	for _, q := range qs {
		t.Cleanup(q.ShutDown)
	}
	return qs
}

// waitsBehind is how many requests of other namespaces are handed out
// before the one request of namespace "quiet", added after a flood of n in
// namespace "flood".
func waitsBehind(q workqueue.TypedInterface[Request], n int) int {
	for i := range n {
		q.Add(reqIn("flood", fmt.Sprint("w-", i)))
	}
	q.Add(reqIn("quiet", "web"))
	return slices.Index(take(q, n+1), "quiet/web")
}

// One namespace's flood delays another's request by one request, not by
// the flood. The queues the hook could use before fail this.
func TestFairQueueFloodDoesNotDelayAnotherNamespace(t *testing.T) {
	const flood = 1000
	for name, q := range testQueues(t) {
		t.Run(name, func(t *testing.T) {
			got := waitsBehind(q, flood)
			fair := got <= 1
			if want := name == "fair"; fair != want {
				t.Errorf("the other namespace's request came after %d of the flood's %d; fair: %v, want %v", got, flood, fair, want)
			}
		})
	}
}

// Namespaces take turns in the order they first had work ready, each
// first in, first out; a namespace that runs out leaves the ring and joins
// at the back when it has work again.
func TestFairQueueRoundRobin(t *testing.T) {
	q := newFairQueue("", workqueue.DefaultTypedControllerRateLimiter[Request]())
	defer q.ShutDown()
	for _, r := range []Request{reqIn("a", "1"), reqIn("a", "2"), reqIn("a", "3"), reqIn("b", "1"), reqIn("c", "1"), reqIn("c", "2")} {
		q.Add(r)
	}
	got := take(q, 3)      // a/1 b/1 c/1
	q.Add(reqIn("b", "2")) // b left the ring; back behind a and c
	q.Add(reqIn("d", "1")) // a new namespace joins at the back
	got = append(got, take(q, q.Len())...)
	want := []string{"a/1", "b/1", "c/1", "a/2", "c/2", "b/2", "d/1", "a/3"}
	if !slices.Equal(got, want) {
		t.Errorf("order %v, want %v", got, want)
	}
}

// Within a namespace a change seen live goes before the re-checks queued
// ahead of it (a restart's replay), as controller-runtime's queue put its
// initial list at low priority; before, the change waited behind the whole
// replay.
func TestFairQueueLiveBeforeRecheck(t *testing.T) {
	q := newFairQueue("", workqueue.DefaultTypedControllerRateLimiter[Request]())
	defer q.ShutDown()
	for i := range 3 {
		r := reqIn("a", fmt.Sprint("replay-", i))
		r.Recheck = true
		q.Add(r)
	}
	q.Add(reqIn("a", "changed"))
	if got := take(q, 4); !slices.Equal(got, []string{"a/changed", "a/replay-0", "a/replay-1", "a/replay-2"}) {
		t.Errorf("order %v, want the live change first, then the replay in order", got)
	}
}

// The queue keeps the workqueue's semantics: one entry per request, a
// request in progress is not handed out twice and is queued again when
// done if it was added meanwhile.
func TestFairQueueSemantics(t *testing.T) {
	q := newFairQueue("", workqueue.DefaultTypedControllerRateLimiter[Request]())
	defer q.ShutDown()
	web, other := reqIn("a", "web"), reqIn("b", "other")
	q.Add(web)
	q.Add(web)
	q.Add(other)
	if q.Len() != 2 {
		t.Fatalf("Len = %d after adding web twice and other once, want 2", q.Len())
	}
	got, _ := q.Get()
	if got != web {
		t.Fatalf("Get = %v, want %v", got, web)
	}
	q.Add(web) // while in progress: held back, not handed out
	if q.Len() != 1 {
		t.Fatalf("Len = %d while web is in progress, want 1 (other)", q.Len())
	}
	if g, _ := q.Get(); g != other {
		t.Fatalf("Get = %v, want %v", g, other)
	}
	q.Done(other)
	q.Done(web) // added meanwhile: queued again
	if q.Len() != 1 {
		t.Fatalf("Len = %d after web is done, want 1", q.Len())
	}
	if g, _ := q.Get(); g != web {
		t.Fatalf("Get = %v, want %v", g, web)
	}
	q.Done(web)
	q.ShutDown()
	if _, shutdown := q.Get(); !shutdown {
		t.Error("Get after ShutDown did not report shutdown")
	}
}

// AddAfter keeps one entry due at the earliest time asked for, and
// AddRateLimited goes through the rate limiter.
func TestFairQueueDelays(t *testing.T) {
	clk := clocktesting.NewFakeClock(t0)
	rl := workqueue.NewTypedItemExponentialFailureRateLimiter[Request](time.Second, time.Minute)
	q := newFairQueueWithClock("", rl, clk)
	defer q.ShutDown()
	web := reqIn("a", "web")
	q.AddAfter(web, time.Hour)
	q.AddAfter(web, time.Second)
	q.AddRateLimited(reqIn("b", "retry")) // due after 1 s
	if q.Len() != 0 {
		t.Fatalf("Len = %d before anything is due, want 0", q.Len())
	}
	clk.Step(time.Second)
	got := map[Request]bool{}
	for range 2 {
		r, _ := q.Get() // blocks until the delaying queue has moved them
		got[r] = true
		q.Done(r)
	}
	if !got[web] || !got[reqIn("b", "retry")] {
		t.Errorf("due after 1 s: %v, want web and retry", got)
	}
	if n := q.NumRequeues(reqIn("b", "retry")); n != 1 {
		t.Errorf("NumRequeues = %d, want 1", n)
	}
	q.Forget(reqIn("b", "retry"))
	if n := q.NumRequeues(reqIn("b", "retry")); n != 0 {
		t.Errorf("NumRequeues after Forget = %d, want 0", n)
	}
}

func TestFifoCompacts(t *testing.T) {
	var f fifo[int]
	for i := range 1000 {
		f.push(i)
		if i%2 == 1 {
			if got := f.pop(); got != i/2 {
				t.Fatalf("pop = %d, want %d", got, i/2)
			}
		}
	}
	if f.len() != 500 || len(f.items) > 1000 {
		t.Errorf("len %d, backing %d", f.len(), len(f.items))
	}
	for i := 500; f.len() > 0; i++ {
		if got := f.pop(); got != i {
			t.Fatalf("pop = %d, want %d", got, i)
		}
	}
	if len(f.items) != 0 {
		t.Errorf("backing %d after draining, want 0", len(f.items))
	}
}
