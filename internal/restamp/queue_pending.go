package restamp

import (
	"slices"
	"sync"
	"time"

	"github.com/confighash/confighash/hasher"
)

// pending is what the hook remembers of one queued workload, from the
// events that queue it to the reconcile that deals with them. Requests are
// deduplicated by the queue, so none of it can travel in the request itself.
type pending struct {
	// sources names the changed sources, so the ConfigChanged event can
	// name them.
	sources []string
	// before holds each changed source's content from before its first
	// change since the last take; see check_priors.go.
	before map[hasher.Source]prior
	// due is the trailing coalescing window, nil until a change sets it;
	// see queue_debounce.go.
	due *debounce
}

// names returns the changed sources, sorted.
func (p pending) names() []string {
	s := slices.Clone(p.sources)
	slices.Sort(s)
	return s
}

// withSources returns p naming more sources as well, each once.
func (p pending) withSources(more []string) pending {
	for _, s := range more {
		if !slices.Contains(p.sources, s) {
			p.sources = append(slices.Clip(p.sources), s)
		}
	}
	return p
}

// fate is what a reconcile leaves of the pending changes it took.
type fate bool

const (
	// forget: the changes are dealt with, or there is nothing to do for
	// them.
	forget fate = false
	// keep: the reconcile runs again for them (an error retried with
	// backoff, a hold looked at again), and wants their names, their
	// content from before and their window then.
	keep fate = true
)

// changes holds the pending state of every queued workload. Reconcile takes
// a workload's entry once, as it starts, and puts it back only when it is to
// run again for the same changes (reconcile.go), so that no way out of it
// can leave an entry behind.
type changes struct {
	mu      sync.Mutex
	entries map[Request]*pending
}

func newChanges() *changes {
	return &changes{entries: map[Request]*pending{}}
}

// entry is r's entry, made if there is none. Callers hold mu.
func (c *changes) entry(r Request) *pending {
	p := c.entries[r]
	if p == nil {
		p = &pending{}
		c.entries[r] = p
	}
	return p
}

// add records a change to source, one of r's sources.
func (c *changes) add(r Request, source string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	p := c.entry(r)
	if !slices.Contains(p.sources, source) {
		p.sources = append(p.sources, source)
	}
}

// addBefore records src's content before its change, unless a change to src
// is recorded for r already: the first one is from before them all.
func (c *changes) addBefore(r Request, src hasher.Source, before prior) {
	c.mu.Lock()
	defer c.mu.Unlock()
	p := c.entry(r)
	if p.before == nil {
		p.before = map[hasher.Source]prior{}
	}
	if _, ok := p.before[src]; !ok {
		p.before[src] = before
	}
}

// touch records a change to one of r's sources at now, to be coalesced
// for window after it, and at most coalesceMax after the first change since
// the last take.
func (c *changes) touch(r Request, now time.Time, window, coalesceMax time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	p := c.entry(r)
	if p.due == nil {
		p.due = &debounce{first: now}
	}
	p.due.last, p.due.window, p.due.coalesceMax = now, window, coalesceMax
}

// dueAt reports when r's coalescing window ends, if one is pending. It
// leaves the entry in place: the settler asks it before the reconcile.
func (c *changes) dueAt(r Request) (time.Time, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	p := c.entries[r]
	if p == nil || p.due == nil {
		return time.Time{}, false
	}
	return p.due.due(), true
}

// take returns and forgets what is recorded for r; the zero pending if
// nothing is.
func (c *changes) take(r Request) pending {
	c.mu.Lock()
	defer c.mu.Unlock()
	p := c.entries[r]
	delete(c.entries, r)
	if p == nil {
		return pending{}
	}
	return *p
}

// since returns the sources recorded for r since its entry was taken,
// leaving them in place. A reconcile that re-stamps names them too: the
// informer updates the cache before the handler records the change, so the
// checksum may already hold a change recorded after the take, and the
// reconcile it queues would then find the stamp current and say nothing.
func (c *changes) since(r Request) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if p := c.entries[r]; p != nil {
		return slices.Clone(p.sources)
	}
	return nil
}

// putBack returns what take gave, for a reconcile that runs again for the
// same changes. Changes recorded since the take are kept with it: they are
// the later ones, so p's content from before and its first change win, and
// theirs set the window.
func (c *changes) putBack(r Request, p pending) {
	if p.sources == nil && p.before == nil && p.due == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	later := c.entries[r]
	if later == nil {
		c.entries[r] = &p
		return
	}
	for _, s := range later.sources {
		if !slices.Contains(p.sources, s) {
			p.sources = append(p.sources, s)
		}
	}
	for src, b := range later.before {
		if _, ok := p.before[src]; !ok {
			if p.before == nil {
				p.before = map[hasher.Source]prior{}
			}
			p.before[src] = b
		}
	}
	switch {
	case p.due == nil:
		p.due = later.due
	case later.due != nil:
		d := *later.due
		d.first = p.due.first
		p.due = &d
	}
	c.entries[r] = &p
}
