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
	// cache anyway (a cache hit wins over a remembered miss); one the cache
	// lacks, or holds as a placeholder, is not stamped from the memory
	// (Unconfirmed), so no re-check has a stamp to correct.
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
	m *memory[missKey, time.Time] // when the GET that missed was sent
}

type missKey struct {
	namespace string
	source    hasher.Source
}

// NewMisses returns a negative cache holding at most max entries for ttl.
// now is the clock; nil means time.Now.
func NewMisses(ttl time.Duration, max int, now func() time.Time) *Misses {
	return &Misses{newMemory[missKey, time.Time](ttl, max, now)}
}

// Recent reports whether s in namespace was confirmed missing within the
// TTL, by a GET sent at or after since (see PreferLive; the zero time takes
// any).
func (m *Misses) Recent(namespace string, s hasher.Source, since time.Time) bool {
	if m == nil {
		return false
	}
	sent, ok := m.m.get(missKey{namespace, s})
	return ok && !sent.Before(since)
}

// Add records that a live GET sent at sent found s in namespace missing.
func (m *Misses) Add(namespace string, s hasher.Source, sent time.Time) {
	if m == nil {
		return
	}
	m.m.add(missKey{namespace, s}, sent, 1)
}

// Len is the number of entries held, expired or not.
func (m *Misses) Len() int { return m.m.len() }

// memory remembers values for a TTL, within a total weight: the short
// memory Misses and RecentReads share. It is safe for concurrent use.
type memory[K comparable, V any] struct {
	ttl time.Duration
	max int
	now func() time.Time

	mu     sync.Mutex
	at     map[K]memoryEntry[V]
	weight int
	// order is the insertion order, oldest first. With one TTL for all,
	// the oldest insertion expires first, so eviction is from the front.
	order []memoryItem[K]
}

type memoryEntry[V any] struct {
	v      V
	at     time.Time
	weight int
}

type memoryItem[K comparable] struct {
	key K
	at  time.Time
}

func newMemory[K comparable, V any](ttl time.Duration, max int, now func() time.Time) *memory[K, V] {
	if now == nil {
		now = time.Now
	}
	return &memory[K, V]{ttl: ttl, max: max, now: now, at: map[K]memoryEntry[V]{}}
}

// get returns the value held for k if it was added within the TTL.
func (m *memory[K, V]) get(k K) (V, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.at[k]
	if !ok || m.now().Sub(e.at) >= m.ttl {
		var zero V
		return zero, false
	}
	return e.v, true
}

// add holds v for k, at weight w; one heavier than the whole bound is not
// held.
func (m *memory[K, V]) add(k K, v V, w int) {
	if w > m.max {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	if old, ok := m.at[k]; ok {
		m.weight -= old.weight
		delete(m.at, k)
	}
	m.evict(now, w)
	m.at[k] = memoryEntry[V]{v: v, at: now, weight: w}
	m.weight += w
	m.order = append(m.order, memoryItem[K]{k, now})
}

func (m *memory[K, V]) len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.at)
}

// evict drops expired entries, then the oldest until there is room for w
// more (and the queue, which may hold stale duplicates, stays within twice
// the bound). A key re-added later has a newer time in the map than its
// stale queue entry, and that stale entry must not delete it.
func (m *memory[K, V]) evict(now time.Time, w int) {
	drop := 0
	for drop < len(m.order) {
		e := m.order[drop]
		if now.Sub(e.at) < m.ttl && m.weight+w <= m.max && len(m.order)-drop < 2*m.max {
			break
		}
		if cur, ok := m.at[e.key]; ok && cur.at.Equal(e.at) {
			m.weight -= cur.weight
			delete(m.at, e.key)
		}
		drop++
	}
	// Copy down rather than reslice, so the backing array does not keep
	// growing at the front.
	m.order = append(m.order[:0], m.order[drop:]...)
}
