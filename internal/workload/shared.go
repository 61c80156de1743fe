package workload

import (
	"crypto/sha256"
	"encoding/binary"
	"runtime"
	"sync"
	"weak"
)

// sharedValues holds, by a key that spells out its content, one value that
// the slimmed copies whose part is equal all point to, read only (nothing
// writes to a cached object: a reader gets a deep copy, and a copy copies
// the part). Many workloads hold equal parts: the same app's selector in
// each of a tenant's namespaces, and the same two conditions of every
// Deployment that has rolled out. Each copy would otherwise keep its own,
// some hundreds of bytes each.
//
// The table holds its values weakly: an entry goes once no cached copy
// points to its value, so it never holds more entries than there are
// copies, and it grows with nothing a tenant can create beyond its objects.
// Its keys are digests (keyOf), so an entry costs the same whatever the
// value: a copy nobody shares costs what it did unshared and some 150
// bytes more.
type sharedValues[T any] struct {
	mu sync.Mutex
	m  map[string]weak.Pointer[T]
}

// share returns the value held under key, or holds the one build makes
// under it and returns that. Equal keys must mean equal values. A nil
// value is returned, not held.
func (s *sharedValues[T]) share(key string, build func() *T) *T {
	s.mu.Lock()
	defer s.mu.Unlock()
	if held := s.m[key].Value(); held != nil {
		return held
	}
	v := build()
	if v == nil {
		return nil
	}
	if s.m == nil {
		s.m = map[string]weak.Pointer[T]{}
	}
	w := weak.Make(v)
	s.m[key] = w
	runtime.AddCleanup(v, s.drop, keyedWeak[T]{key: key, w: w})
	return v
}

// keyedWeak is what drop is told when a held value is collected.
type keyedWeak[T any] struct {
	key string
	w   weak.Pointer[T]
}

// drop removes k's entry, unless a newer value took its key meanwhile.
func (s *sharedValues[T]) drop(k keyedWeak[T]) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m[k.key] == k.w {
		delete(s.m, k.key)
	}
}

// len is the number of values held.
func (s *sharedValues[T]) len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.m)
}

// keyOf is a digest of parts, each with its length, so that two lists of
// parts have one key only when they are equal: a tenant cannot make one
// copy's part stand for another's.
func keyOf(parts ...string) string {
	h := sha256.New()
	var n [binary.MaxVarintLen64]byte
	for _, p := range parts {
		h.Write(n[:binary.PutUvarint(n[:], uint64(len(p)))])
		h.Write([]byte(p))
	}
	return string(h.Sum(nil))
}
