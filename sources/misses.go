package sources

import (
	"sync"
	"time"

	"github.com/confighash/confighash/hasher"
)

// Negative-cache defaults.
const (
	// DefaultMissTTL is how long a confirmed miss is trusted. Live
	// confirmation exists for one race: a source created a moment before
	// the workload that reads it, not yet in the informer. Informer lag is
	// milliseconds, so two seconds covers a loaded apiserver while still
	// absorbing a burst of admissions that all name the same missing
	// source. A source created within the TTL is found in the informer
	// cache anyway (a cache hit wins over a remembered miss), and the hook's
	// watch on its creation corrects any stamp computed in between.
	DefaultMissTTL = 2 * time.Second
	// DefaultMissEntries bounds the cache's memory: a few hundred bytes per
	// entry, so well under a MiB however many names callers invent.
	DefaultMissEntries = 4096
)

// Misses remembers sources a live GET found missing, so that repeated
// admissions naming the same missing source do not each cost a GET. It is
// safe for concurrent use; the zero value is not usable, call NewMisses.
//
// It holds names only, never content, and is consulted only after the
// informer cache missed too, so it cannot make a present source look absent
// for longer than the informer takes to see it.
type Misses struct {
	ttl time.Duration
	max int
	now func() time.Time

	mu sync.Mutex
	at map[missKey]time.Time
	// order is the insertion order, oldest first. With one TTL for all,
	// the oldest insertion expires first, so eviction is from the front.
	order []missEntry
}

type missKey struct {
	namespace string
	source    hasher.Source
}

type missEntry struct {
	key missKey
	at  time.Time
}

// NewMisses returns a negative cache holding at most max entries for ttl.
// now is the clock; nil means time.Now.
func NewMisses(ttl time.Duration, max int, now func() time.Time) *Misses {
	if now == nil {
		now = time.Now
	}
	return &Misses{ttl: ttl, max: max, now: now, at: map[missKey]time.Time{}}
}

// Recent reports whether s in namespace was confirmed missing within the TTL.
func (m *Misses) Recent(namespace string, s hasher.Source) bool {
	if m == nil {
		return false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	at, ok := m.at[missKey{namespace, s}]
	return ok && m.now().Sub(at) < m.ttl
}

// Add records that a live GET found s in namespace missing.
func (m *Misses) Add(namespace string, s hasher.Source) {
	if m == nil || m.max <= 0 {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	m.evict(now)
	k := missKey{namespace, s}
	m.at[k] = now
	m.order = append(m.order, missEntry{k, now})
}

// Len is the number of entries held, expired or not.
func (m *Misses) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.at)
}

// evict drops expired entries, then the oldest until there is room for one
// (and the queue, which may hold stale duplicates, stays within twice the
// bound). A key re-added later has a newer time in the map than its stale queue
// entry, and that stale entry must not delete it.
func (m *Misses) evict(now time.Time) {
	drop := 0
	for drop < len(m.order) {
		e := m.order[drop]
		if now.Sub(e.at) < m.ttl && len(m.at) < m.max && len(m.order)-drop < 2*m.max {
			break
		}
		if m.at[e.key].Equal(e.at) {
			delete(m.at, e.key)
		}
		drop++
	}
	// Copy down rather than reslice, so the backing array does not keep
	// growing at the front.
	m.order = append(m.order[:0], m.order[drop:]...)
}
