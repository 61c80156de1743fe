package sources

import (
	"fmt"
	"testing"
	"time"

	"github.com/confighash/confighash/hasher"
)

func TestMisses(t *testing.T) {
	a := hasher.Source{Kind: hasher.Secret, Name: "a"}
	b := hasher.Source{Kind: hasher.ConfigMap, Name: "b"}
	tests := map[string]struct {
		max  int
		do   func(m *Misses, tick func(time.Duration))
		want map[string]bool // "namespace/source name" -> Recent
	}{
		"remembered within the TTL": {
			max:  10,
			do:   func(m *Misses, tick func(time.Duration)) { m.Add("ns", a); tick(time.Second) },
			want: map[string]bool{"ns/a": true, "other/a": false, "ns/b": false},
		},
		"forgotten after the TTL": {
			max:  10,
			do:   func(m *Misses, tick func(time.Duration)) { m.Add("ns", a); tick(2 * time.Second) },
			want: map[string]bool{"ns/a": false},
		},
		"re-adding renews, and the stale entry does not evict it": {
			max: 10,
			do: func(m *Misses, tick func(time.Duration)) {
				m.Add("ns", a)
				tick(1500 * time.Millisecond)
				m.Add("ns", a)
				tick(1000 * time.Millisecond)
				m.Add("ns", b) // evicts the first, stale, entry for a
			},
			want: map[string]bool{"ns/a": true, "ns/b": true},
		},
		"full: the oldest goes": {
			max: 1,
			do: func(m *Misses, tick func(time.Duration)) {
				m.Add("ns", a)
				m.Add("ns", b)
			},
			want: map[string]bool{"ns/a": false, "ns/b": true},
		},
		"zero size remembers nothing": {
			max:  0,
			do:   func(m *Misses, tick func(time.Duration)) { m.Add("ns", a) },
			want: map[string]bool{"ns/a": false},
		},
	}
	srcs := map[string]hasher.Source{"a": a, "b": b}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			now := time.Unix(1000, 0)
			m := NewMisses(2*time.Second, tc.max, func() time.Time { return now })
			tc.do(m, func(d time.Duration) { now = now.Add(d) })
			for k, want := range tc.want {
				ns, s := k[:len(k)-2], k[len(k)-1:]
				if got := m.Recent(ns, srcs[s]); got != want {
					t.Errorf("Recent(%s) = %v, want %v", k, got, want)
				}
			}
		})
	}
}

// However many names callers invent, the cache stays within its bound.
func TestMissesBounded(t *testing.T) {
	now := time.Unix(1000, 0)
	m := NewMisses(time.Hour, 100, func() time.Time { return now })
	for i := range 10000 {
		m.Add("ns", hasher.Source{Kind: hasher.Secret, Name: fmt.Sprint(i)})
		m.Add("ns", hasher.Source{Kind: hasher.Secret, Name: "same"})
	}
	if got := m.Len(); got > 100 {
		t.Errorf("%d entries, want at most 100", got)
	}
	if got := len(m.m.order); got > 200 {
		t.Errorf("queue of %d, want at most 200", got)
	}
}
