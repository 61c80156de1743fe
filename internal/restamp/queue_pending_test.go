package restamp

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

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

func TestContentChanged(t *testing.T) {
	now := metav1.Now()
	d1 := []byte("0123456789abcdef0123456789abcdef")
	d2 := []byte("fedcba9876543210fedcba9876543210")
	baseCM := func() *corev1.ConfigMap {
		return &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: "ns", ResourceVersion: "1", Labels: map[string]string{"a": "1"}},
			Data:       map[string]string{"k": "aa", "l": "bb"},
			BinaryData: map[string][]byte{"b": d1},
		}
	}
	baseSecret := func() *corev1.Secret {
		return &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: "ns", ResourceVersion: "1"},
			Type:       corev1.SecretTypeOpaque,
			Data:       map[string][]byte{"password": d1},
		}
	}
	cmWith := func(f func(*corev1.ConfigMap)) *corev1.ConfigMap { c := baseCM(); f(c); return c }
	secretWith := func(f func(*corev1.Secret)) *corev1.Secret { s := baseSecret(); f(s); return s }

	tests := map[string]struct {
		old, new client.Object
		want     bool
	}{
		"configmap unchanged": {
			old: baseCM(), new: baseCM(), want: false,
		},
		"configmap data value": {
			old: baseCM(), new: cmWith(func(c *corev1.ConfigMap) { c.Data["k"] = "cc" }), want: true,
		},
		"configmap data key added": {
			old: baseCM(), new: cmWith(func(c *corev1.ConfigMap) { c.Data["m"] = "aa" }), want: true,
		},
		"configmap data key removed": {
			old: baseCM(), new: cmWith(func(c *corev1.ConfigMap) { delete(c.Data, "l") }), want: true,
		},
		"configmap data key renamed": {
			old: baseCM(), new: cmWith(func(c *corev1.ConfigMap) { delete(c.Data, "l"); c.Data["m"] = "bb" }), want: true,
		},
		"configmap binaryData value": {
			old: baseCM(), new: cmWith(func(c *corev1.ConfigMap) { c.BinaryData["b"] = d2 }), want: true,
		},
		"configmap binaryData removed": {
			old: baseCM(), new: cmWith(func(c *corev1.ConfigMap) { c.BinaryData = nil }), want: true,
		},
		"configmap data moved to binaryData": {
			old:  cmWith(func(c *corev1.ConfigMap) { c.Data = map[string]string{"x": "aa"}; c.BinaryData = nil }),
			new:  cmWith(func(c *corev1.ConfigMap) { c.Data = nil; c.BinaryData = map[string][]byte{"x": {0xaa}} }),
			want: true,
		},
		"configmap nil and empty data alike": {
			old:  cmWith(func(c *corev1.ConfigMap) { c.Data = nil; c.BinaryData = nil }),
			new:  cmWith(func(c *corev1.ConfigMap) { c.Data = map[string]string{}; c.BinaryData = map[string][]byte{} }),
			want: false,
		},
		"configmap labels only": {
			old: baseCM(), new: cmWith(func(c *corev1.ConfigMap) { c.Labels = map[string]string{"a": "2"}; c.ResourceVersion = "2" }), want: false,
		},
		"configmap annotations only": {
			old: baseCM(), new: cmWith(func(c *corev1.ConfigMap) { c.Annotations = map[string]string{"x": "y"}; c.ResourceVersion = "2" }), want: false,
		},
		"configmap deletion starts": {
			old: baseCM(), new: cmWith(func(c *corev1.ConfigMap) { c.DeletionTimestamp = &now }), want: true,
		},
		"configmap deletion already started": {
			old:  cmWith(func(c *corev1.ConfigMap) { c.DeletionTimestamp = &now }),
			new:  cmWith(func(c *corev1.ConfigMap) { c.DeletionTimestamp = &now; c.ResourceVersion = "2" }),
			want: false,
		},
		"configmap deletion cancelled": {
			old: cmWith(func(c *corev1.ConfigMap) { c.DeletionTimestamp = &now }), new: baseCM(), want: true,
		},
		"secret unchanged": {
			old: baseSecret(), new: baseSecret(), want: false,
		},
		"secret data value": {
			old: baseSecret(), new: secretWith(func(s *corev1.Secret) { s.Data["password"] = d2 }), want: true,
		},
		"secret data key added": {
			old: baseSecret(), new: secretWith(func(s *corev1.Secret) { s.Data["user"] = d1 }), want: true,
		},
		"secret data emptied": {
			old: baseSecret(), new: secretWith(func(s *corev1.Secret) { s.Data = nil }), want: true,
		},
		"secret labels only": {
			old: baseSecret(), new: secretWith(func(s *corev1.Secret) { s.Labels = map[string]string{"x": "y"}; s.ResourceVersion = "2" }), want: false,
		},
		"secret deletion starts": {
			old: baseSecret(), new: secretWith(func(s *corev1.Secret) { s.DeletionTimestamp = &now }), want: true,
		},
		"other kinds count as changed": {
			old: &corev1.Pod{}, new: &corev1.Pod{}, want: true,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := contentChanged(tc.old, tc.new); got != tc.want {
				t.Errorf("contentChanged = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestRequestString(t *testing.T) {
	tests := map[string]struct {
		r    Request
		want string
	}{
		"deployment": {
			r:    Request{KindName: "Deployment", NamespacedName: types.NamespacedName{Namespace: "ns", Name: "web"}},
			want: "Deployment ns/web",
		},
		"startup is not shown": {
			r:    Request{KindName: "CronJob", NamespacedName: types.NamespacedName{Namespace: "batch", Name: "nightly"}, Recheck: true},
			want: "CronJob batch/nightly",
		},
		"zero": {
			r:    Request{},
			want: " /",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := tc.r.String(); got != tc.want {
				t.Errorf("String() = %q, want %q", got, tc.want)
			}
			if got := fmt.Sprint(tc.r); got != tc.want {
				t.Errorf("fmt.Sprint = %q, want %q", got, tc.want)
			}
		})
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
