package webhook

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// TestSlotsGoRoundTheNamespaces: with one slot busy, five requests of one
// namespace wait, then one of another. The freed slot goes to the first
// namespace's oldest, the next one to the other namespace, and only then
// to the first's remaining four, in the order they came. First come, first
// served, the other namespace would have waited for all five.
func TestSlotsGoRoundTheNamespaces(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newSlots(1)
		busy, err := s.take(t.Context(), inNamespace("noisy"), time.Second)
		if err != nil {
			t.Fatal(err)
		}
		var mu sync.Mutex
		var order []string
		var wg sync.WaitGroup
		wait := func(ns, name string) {
			wg.Go(func() {
				give, err := s.take(t.Context(), func() string { return ns }, time.Minute)
				if err != nil {
					t.Errorf("%s: %v", name, err)
					return
				}
				mu.Lock()
				order = append(order, name)
				mu.Unlock()
				time.Sleep(time.Millisecond) // handled
				give()
			})
			synctest.Wait() // queued in this order
		}
		for _, name := range []string{"n1", "n2", "n3", "n4", "n5"} {
			wait("noisy", name)
		}
		wait("quiet", "q1")
		busy()
		wg.Wait()
		if got, want := strings.Join(order, " "), "n1 q1 n2 n3 n4 n5"; got != want {
			t.Errorf("slots went to %s, want %s", got, want)
		}
		if s.free != 1 || len(s.turns) != 0 || len(s.waiting) != 0 {
			t.Errorf("afterwards: %d free, turns %v, waiting %v; want the slot back and nothing queued", s.free, s.turns, s.waiting)
		}
	})
}

// TestSlotsWaitEnds: a request whose wait runs out, or whose caller goes
// away, leaves the queue (errNoSlot, or the context's error), and a slot
// freed later goes to the one still waiting, or back to the free count.
func TestSlotsWaitEnds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newSlots(1)
		busy, err := s.take(t.Context(), inNamespace("a"), time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.take(t.Context(), inNamespace("a"), time.Second); !errors.Is(err, errNoSlot) {
			t.Fatalf("a wait that ran out: %v, want errNoSlot", err)
		}
		ctx, cancel := context.WithCancel(t.Context())
		gone := make(chan error, 1)
		go func() { _, err := s.take(ctx, inNamespace("b"), time.Minute); gone <- err }()
		synctest.Wait()
		cancel()
		if err := <-gone; !errors.Is(err, context.Canceled) {
			t.Fatalf("a caller that went away: %v, want context.Canceled", err)
		}
		got := make(chan error, 1)
		go func() {
			give, err := s.take(t.Context(), inNamespace("c"), time.Minute)
			if err == nil {
				give()
			}
			got <- err
		}()
		synctest.Wait()
		if len(s.turns) != 1 || s.turns[0] != "c" {
			t.Fatalf("waiting: %v, want only c", s.turns)
		}
		busy()
		if err := <-got; err != nil {
			t.Fatalf("the request still waiting: %v", err)
		}
		if s.free != 1 || len(s.turns) != 0 || len(s.waiting) != 0 {
			t.Errorf("afterwards: %d free, turns %v, waiting %v", s.free, s.turns, s.waiting)
		}
	})
}

// TestSlotsGrantedAsTheWaitEnds: a slot freed in the same instant a
// request's wait runs out is either taken by it or passed on, never lost.
func TestSlotsGrantedAsTheWaitEnds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newSlots(1)
		busy, err := s.take(t.Context(), inNamespace("a"), time.Second)
		if err != nil {
			t.Fatal(err)
		}
		go func() { time.Sleep(time.Second); busy() }()
		if give, err := s.take(t.Context(), inNamespace("b"), time.Second); err == nil {
			give()
		}
		synctest.Wait()
		if s.free != 1 || len(s.turns) != 0 {
			t.Errorf("%d free, turns %v; want the one slot free", s.free, s.turns)
		}
	})
}

// inNamespace is a namespace func for take.
func inNamespace(name string) func() string { return func() string { return name } }

// TestSlotsReadNoNamespaceWhenFree: a request that finds a slot free takes
// it without its namespace being read (the body is not scanned on the
// admission path unless the request has to wait).
func TestSlotsReadNoNamespaceWhenFree(t *testing.T) {
	s := newSlots(2)
	unread := func() string {
		t.Error("the namespace was read with a slot free")
		return ""
	}
	for range 2 {
		if _, err := s.take(t.Context(), unread, time.Second); err != nil {
			t.Fatal(err)
		}
	}
	read := false
	if _, err := s.take(t.Context(), func() string { read = true; return "a" }, time.Millisecond); !errors.Is(err, errNoSlot) || !read {
		t.Errorf("with no slot free: %v, namespace read %v; want errNoSlot after reading it", err, read)
	}
}
