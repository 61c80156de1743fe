package restamp

import (
	"time"
)

// debounce is the trailing coalescing window of one queued workload. A
// window fixed from the first change splits a burst written in steps (a
// script patching keys one by one, External Secrets refreshing several
// Secrets) into several rollouts; a trailing one waits until the burst
// settles. The cap keeps a source that never settles from never rolling
// its readers.
type debounce struct {
	first, last time.Time
	window      time.Duration
	maxWait     time.Duration
}

// due is when the workload should be re-checked: window after the last
// change, but no later than maxWait after the first.
func (d debounce) due() time.Time {
	trailing := d.last.Add(d.window)
	if capped := d.first.Add(max(d.maxWait, d.window)); capped.Before(trailing) {
		return capped
	}
	return trailing
}

// touch records a change to one of r's sources at now, to be coalesced
// for window after it, and at most maxWait after the first change since
// the last take.
func (c *changes) touch(r Request, now time.Time, window, maxWait time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	d, ok := c.due[r]
	if !ok {
		d.first = now
	}
	d.last, d.window, d.maxWait = now, window, maxWait
	c.due[r] = d
}

// dueAt reports when r's coalescing window ends, if changes are pending.
func (c *changes) dueAt(r Request) (time.Time, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	d, ok := c.due[r]
	if !ok {
		return time.Time{}, false
	}
	return d.due(), true
}
