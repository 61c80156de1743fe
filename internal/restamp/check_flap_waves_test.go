package restamp

import (
	"fmt"
	"testing"
	"time"
)

// heldWithin plays re-stamps to a workload with the default options, every
// step apart, with the contents given, and whether the previous rollout was
// still going at each; it returns the re-stamp that was held (-1: none).
func heldWithin(n int, step time.Duration, content func(i int) string, rolling bool) int {
	g := newFlapGuard(DefaultOptions(), testFlapEntries)
	w := keyOf(req("web"))
	for i := range n {
		now := at(time.Duration(i) * step)
		if v := g.look(w, content(i), true, nil, now); v.Hold != nil {
			return i
		}
		g.restampedTo(w, now, content(i), rolling)
	}
	return -1
}

// A person's ten edits a minute apart, each waited for until its rollout
// ended, are never held: with waves the hook knows the previous rollout
// had ended, and the content is new each time.
func TestFlapHoldSparesAPersonWhoEdits(t *testing.T) {
	edit := func(i int) string { return fmt.Sprintf("edit-%d", i) }
	if i := heldWithin(10, time.Minute, edit, false); i >= 0 {
		t.Errorf("a person's edit %d was held", i)
	}
	// Without waves every re-stamp counts, as before them: the fifth
	// re-stamp within ten minutes is the limit, and the next is held.
	if i := heldWithin(10, time.Minute, edit, true); i != DefaultOptions().FlapLimit {
		t.Errorf("without waves: held at re-stamp %d, want %d", i, DefaultOptions().FlapLimit)
	}
}

// A Secret flipped between two contents every 2 s is held, whether the hook
// saw its rollouts still going (they take longer than 2 s) or not (the
// content comes back).
func TestFlapHoldCatchesAMachine(t *testing.T) {
	flip := func(i int) string { return []string{"a", "b"}[i%2] }
	limit := DefaultOptions().FlapLimit
	if i := heldWithin(20, 2*time.Second, flip, true); i != limit {
		t.Errorf("rollouts still going: held at re-stamp %d, want %d", i, limit)
	}
	// Content that comes back counts from its first return: re-stamps 2, 3,
	// ... count, so the limit is reached two re-stamps later.
	if i := heldWithin(20, 2*time.Second, flip, false); i != limit+2 {
		t.Errorf("rollouts ended, content back: held at re-stamp %d, want %d", i, limit+2)
	}
	// New content every 2 s whose rollouts have ended (a 0-replica
	// reader): nothing comes back and nothing was rolling, so nothing is
	// held; the write budget and the coalescing window bound it.
	if i := heldWithin(20, 2*time.Second, func(i int) string { return fmt.Sprint(i) }, false); i >= 0 {
		t.Errorf("new content, rollouts ended: held at re-stamp %d", i)
	}
}
