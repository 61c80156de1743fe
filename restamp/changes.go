package restamp

import (
	"slices"
	"sync"

	"github.com/confighash/confighash/hasher"
)

// changes remembers which sources triggered each queued workload, so the
// ConfigChanged event can name them. Requests are deduplicated by the queue,
// so the names cannot travel in the request itself.
type changes struct {
	mu      sync.Mutex
	pending map[Request][]string
	// before holds each changed source's content from before its first
	// change since the last take; see priors.go.
	before map[Request]map[hasher.Source]prior
	// due holds each workload's trailing coalescing window; see debounce.go.
	due map[Request]debounce
}

func newChanges() *changes {
	return &changes{pending: map[Request][]string{}, before: map[Request]map[hasher.Source]prior{}, due: map[Request]debounce{}}
}

func (c *changes) add(r Request, source string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !slices.Contains(c.pending[r], source) {
		c.pending[r] = append(c.pending[r], source)
	}
}

// take returns and forgets the sources recorded for r, sorted.
func (c *changes) take(r Request) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.pending[r]
	delete(c.pending, r)
	delete(c.before, r)
	delete(c.due, r)
	slices.Sort(s)
	return s
}
