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
	coalesceMax time.Duration
}

// due is when the workload should be re-checked: window after the last
// change, but no later than coalesceMax after the first. window never
// exceeds coalesceMax: Options.Validate refuses a default window above it,
// and windowOf caps an annotation's window at it.
func (d debounce) due() time.Time {
	trailing := d.last.Add(d.window)
	if capped := d.first.Add(d.coalesceMax); capped.Before(trailing) {
		return capped
	}
	return trailing
}
