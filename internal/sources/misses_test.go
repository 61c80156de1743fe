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
			do:   func(m *Misses, tick func(time.Duration)) { m.Add("ns", a, time.Time{}); tick(time.Second) },
			want: map[string]bool{"ns/a": true, "other/a": false, "ns/b": false},
		},
		"forgotten after the TTL": {
			max:  10,
			do:   func(m *Misses, tick func(time.Duration)) { m.Add("ns", a, time.Time{}); tick(2 * time.Second) },
			want: map[string]bool{"ns/a": false},
		},
		"re-adding renews, and the stale entry does not evict it": {
			max: 10,
			do: func(m *Misses, tick func(time.Duration)) {
				m.Add("ns", a, time.Time{})
				tick(1500 * time.Millisecond)
				m.Add("ns", a, time.Time{})
				tick(1000 * time.Millisecond)
				m.Add("ns", b, time.Time{}) // evicts the first, stale, entry for a
			},
			want: map[string]bool{"ns/a": true, "ns/b": true},
		},
		"full: the oldest goes": {
			max: 1,
			do: func(m *Misses, tick func(time.Duration)) {
				m.Add("ns", a, time.Time{})
				m.Add("ns", b, time.Time{})
			},
			want: map[string]bool{"ns/a": false, "ns/b": true},
		},
		"zero size remembers nothing": {
			max:  0,
			do:   func(m *Misses, tick func(time.Duration)) { m.Add("ns", a, time.Time{}) },
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
				if got := m.Recent(ns, srcs[s], time.Time{}); got != want {
					t.Errorf("Recent(%s) = %v, want %v", k, got, want)
				}
			}
		})
	}
}

// TestMissesSince: under PreferLive a miss counts only if its GET was sent
// at or after the caller began; an older one, however recent, may be from
// before the source was created.
func TestMissesSince(t *testing.T) {
	a := hasher.Source{Kind: hasher.Secret, Name: "a"}
	now := time.Unix(1000, 0)
	m := NewMisses(2*time.Second, 10, func() time.Time { return now })
	sent := now
	m.Add("ns", a, sent)
	for _, c := range []struct {
		since time.Time
		want  bool
	}{
		{time.Time{}, true},
		{sent.Add(-time.Millisecond), true},
		{sent, true},
		{sent.Add(time.Millisecond), false},
	} {
		if got := m.Recent("ns", a, c.since); got != c.want {
			t.Errorf("Recent since %v after the GET = %v, want %v", c.since.Sub(sent), got, c.want)
		}
	}
}

// However many names callers invent, the cache stays within its bound.
func TestMissesBounded(t *testing.T) {
	now := time.Unix(1000, 0)
	m := NewMisses(time.Hour, 100, func() time.Time { return now })
	for i := range 10000 {
		m.Add("ns", hasher.Source{Kind: hasher.Secret, Name: fmt.Sprint(i)}, time.Time{})
		m.Add("ns", hasher.Source{Kind: hasher.Secret, Name: "same"}, time.Time{})
	}
	if got := m.Len(); got > 100 {
		t.Errorf("%d entries, want at most 100", got)
	}
	if got := len(m.m.order); got > 200 {
		t.Errorf("queue of %d, want at most 200", got)
	}
}
