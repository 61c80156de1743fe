package restamp

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/confighash/confighash/hasher"
)

func TestChanges(t *testing.T) {
	type add struct {
		r      Request
		source string
	}
	tests := map[string]struct {
		adds []add
		take Request
		want []string
		left int // requests still pending after the take
	}{
		"nothing recorded": {
			take: req("a"),
		},
		"sorted": {
			adds: []add{{req("a"), "secret/db"}, {req("a"), "configmap/z"}, {req("a"), "configmap/app"}},
			take: req("a"),
			want: []string{"configmap/app", "configmap/z", "secret/db"},
		},
		"deduplicated": {
			adds: []add{{req("a"), "configmap/app"}, {req("a"), "secret/db"}, {req("a"), "configmap/app"}, {req("a"), "secret/db"}},
			take: req("a"),
			want: []string{"configmap/app", "secret/db"},
		},
		"per request": {
			adds: []add{{req("a"), "configmap/app"}, {req("b"), "secret/db"}, {Request{KindName: "StatefulSet", NamespacedName: req("a").NamespacedName}, "configmap/other"}},
			take: req("a"),
			want: []string{"configmap/app"},
			left: 2,
		},
		"take of another request leaves ours": {
			adds: []add{{req("b"), "secret/db"}},
			take: req("a"),
			left: 1,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			c := newChanges()
			for _, a := range tc.adds {
				c.add(a.r, a.source)
			}
			got := c.take(tc.take).names()
			if !slices.Equal(got, tc.want) {
				t.Errorf("take = %q, want %q", got, tc.want)
			}
			if again := c.take(tc.take).names(); again != nil {
				t.Errorf("second take = %q, want nil: take must forget", again)
			}
			if len(c.entries) != tc.left {
				t.Errorf("%d requests pending after take, want %d: %v", len(c.entries), tc.left, c.entries)
			}
		})
	}
}

func TestChangesConcurrent(t *testing.T) {
	c := newChanges()
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for j := range 50 {
				c.add(req("a"), fmt.Sprintf("configmap/c%02d", (i+j)%20))
			}
		})
	}
	wg.Wait()
	got := c.take(req("a")).names()
	if len(got) != 20 || !slices.IsSorted(got) {
		t.Errorf("take = %q, want the 20 distinct sources, sorted", got)
	}
}

// TestChangesPutBack: what a reconcile puts back for a retry comes back
// whole, merged with the changes recorded while it ran: its own content from
// before and its first change win, the later change's window counts.
func TestChangesPutBack(t *testing.T) {
	r := req("a")
	app := hasher.Source{Kind: hasher.ConfigMap, Name: "app"}
	db := hasher.Source{Kind: hasher.Secret, Name: "db"}
	first, later := t0, t0.Add(5*time.Second)

	t.Run("alone", func(t *testing.T) {
		c := newChanges()
		c.add(r, "configmap/app")
		c.touch(r, first, time.Second, 10*time.Second)
		c.putBack(r, c.take(r))
		if got := c.take(r); !slices.Equal(got.names(), []string{"configmap/app"}) || got.due == nil || !got.due.due().Equal(first.Add(time.Second)) {
			t.Errorf("after putBack: %+v", got)
		}
	})
	t.Run("with a change recorded meanwhile", func(t *testing.T) {
		c := newChanges()
		c.add(r, "configmap/app")
		c.addBefore(r, app, prior{known: true, found: true})
		c.touch(r, first, time.Second, 10*time.Second)
		p := c.take(r)
		c.add(r, "secret/db")
		c.add(r, "configmap/app")
		c.addBefore(r, app, prior{known: false})
		c.addBefore(r, db, prior{known: true})
		c.touch(r, later, 2*time.Second, 10*time.Second)
		c.putBack(r, p)
		got := c.take(r)
		if !slices.Equal(got.names(), []string{"configmap/app", "secret/db"}) {
			t.Errorf("names = %q", got.names())
		}
		if b := got.before[app]; !b.known || !b.found {
			t.Errorf("before[app] = %+v, want the first one", b)
		}
		if _, ok := got.before[db]; !ok || len(got.before) != 2 {
			t.Errorf("before = %+v, want app's and db's", got.before)
		}
		if got.due == nil || !got.due.first.Equal(first) || !got.due.due().Equal(later.Add(2*time.Second)) {
			t.Errorf("due = %+v, want the first change's start and the later one's window", got.due)
		}
	})
	t.Run("nothing taken puts nothing back", func(t *testing.T) {
		c := newChanges()
		c.putBack(r, c.take(r))
		if len(c.entries) != 0 {
			t.Errorf("entries = %v", c.entries)
		}
	})
}
