package workload

import (
	"runtime"
	"strconv"
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
type sharedValues[T any] struct {
	mu sync.Mutex
	m  map[string]weak.Pointer[T]
}

// share returns the value held under key, or holds the one build makes
// under it and returns that. Equal keys must mean equal values.
func (s *sharedValues[T]) share(key string, build func() *T) *T {
	s.mu.Lock()
	defer s.mu.Unlock()
	if held := s.m[key].Value(); held != nil {
		return held
	}
	v := build()
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

// keyOf spells out parts unambiguously, each with its length.
func keyOf(parts ...string) string {
	n := 0
	for _, p := range parts {
		n += len(p) + 4
	}
	b := make([]byte, 0, n)
	for _, p := range parts {
		b = strconv.AppendInt(b, int64(len(p)), 10)
		b = append(b, ':')
		b = append(b, p...)
	}
	return string(b)
}
