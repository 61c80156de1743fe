package sources

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/confighash/confighash/hasher"
	"github.com/confighash/confighash/internal/contract"
)

// manyKeys is the object of issue 13: empty values, so the apiserver's
// size limit (on values) lets 120,000 keys through.
func manyKeys(n int) map[string]string {
	m := make(map[string]string, n)
	for i := range n {
		m[fmt.Sprintf("k%06d", i)] = ""
	}
	return m
}

func manyBytes(n int) map[string][]byte {
	m := make(map[string][]byte, n)
	for i := range n {
		m[fmt.Sprintf("k%06d", i)] = nil
	}
	return m
}

// retained is the heap that the result of f keeps alive after a full GC.
func retained(f func() any) uint64 {
	heap := func() uint64 {
		runtime.GC()
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	before := heap()
	out := f()
	after := heap()
	runtime.KeepAlive(out)
	if after < before {
		return 0
	}
	return after - before
}

// TestSlimManyKeysHeapBounded: a source over the key bound costs its
// identity, whatever its key count. Before the bound, a 120,000-key
// ConfigMap held about 19 MiB slimmed and a Secret about 17.5 MiB.
func TestSlimManyKeysHeapBounded(t *testing.T) {
	const keys = 120000
	objs := map[string]func() client.Object{
		"configmap": func() client.Object { return cm("big", "ns", manyKeys(keys)) },
		"secret":    func() client.Object { return secret("big", "ns", manyBytes(keys)) },
	}
	for name, mk := range objs {
		t.Run(name, func(t *testing.T) {
			in := mk()
			var out any
			got := retained(func() any {
				var err error
				if out, err = Slim(in); err != nil {
					t.Fatal(err)
				}
				return out
			})
			// Far below one MiB: identity and a marker, a few hundred bytes,
			// with room for the noise of the runtime's own allocations.
			if got > 64<<10 {
				t.Errorf("slimmed %d-key %s holds %d KiB, want a bounded placeholder", keys, name, got>>10)
			}
			_, err := Content(out)
			var e *NotHeldError
			if !errors.As(err, &e) || e.Reason != TooManyKeys || e.Source.Name != "big" {
				t.Errorf("Content of a %d-key %s = %v, want a NotHeldError for too many keys", keys, name, err)
			}
			runtime.KeepAlive(in)
		})
	}
}

// TestSlimDigestsShareOneArray: the digests of one object are one
// allocation, not one per key (a 64-character hex string per ConfigMap key
// and a 32-byte slice per Secret key before).
func TestSlimDigestsShareOneArray(t *testing.T) {
	const keys = 1000
	objs := map[string]client.Object{
		"configmap": cm("app", "ns", manyKeys(keys)),
		"secret":    secret("app", "ns", manyBytes(keys)),
	}
	for name, in := range objs {
		t.Run(name, func(t *testing.T) {
			allocs := testing.AllocsPerRun(10, func() {
				if _, err := Slim(in); err != nil {
					t.Fatal(err)
				}
			})
			// The object, its metadata, the map (a few allocations as Go
			// splits a large map into tables) and the array: a constant.
			if allocs > 64 {
				t.Errorf("slimming a %d-key %s takes %v allocations, want a few, not one per key", keys, name, allocs)
			}
		})
	}
}

// TestSlimKeyBound: at the bound the digests are held, one over it they
// are not.
func TestSlimKeyBound(t *testing.T) {
	s := Slimmer{MaxKeys: 3}
	at := &corev1.ConfigMap{}
	at.Name, at.Namespace = "at", "ns"
	at.Data = map[string]string{"a": "1", "b": "2"}
	at.BinaryData = map[string][]byte{"c": {3}}
	over := at.DeepCopy()
	over.Name = "over"
	over.Data["d"] = "4"
	for _, tc := range []struct {
		obj  *corev1.ConfigMap
		held bool
	}{{at, true}, {over, false}} {
		out, err := s.Slim(tc.obj)
		if err != nil {
			t.Fatal(err)
		}
		c, err := Content(out)
		if tc.held && (err != nil || !sameContent(c, hasher.ConfigMapContent(tc.obj))) {
			t.Errorf("%s: Content = %v, %v; want the digests", tc.obj.Name, c, err)
		}
		var e *NotHeldError
		if !tc.held && (!errors.As(err, &e) || e.Reason != TooManyKeys) {
			t.Errorf("%s: Content err = %v, want too many keys", tc.obj.Name, err)
		}
	}
}

// TestSlimNotServed: a source of a namespace not served keeps its identity
// and nothing of its content, and Content refuses it: it must never be
// taken for an empty source.
func TestSlimNotServed(t *testing.T) {
	s := Slimmer{Serves: func(ns string) bool { return ns == "served" }}
	for name, in := range map[string]client.Object{
		"configmap": &corev1.ConfigMap{ObjectMeta: fullMeta("app", "cm-secretish-nsx"), Data: map[string]string{"k": "cm-value-nsx"}},
		"secret":    &corev1.Secret{ObjectMeta: fullMeta("app", "secret-secretish-nsx"), Data: map[string][]byte{"k": []byte("secret-value-nsx")}},
	} {
		t.Run(name, func(t *testing.T) {
			out, err := s.Slim(in)
			if err != nil {
				t.Fatal(err)
			}
			o := out.(client.Object)
			checkSlimMeta(t, metaOf(o), metaOf(in))
			checkNoValues(t, out, "cm-value-nsx", "secret-value-nsx", "cm-secretish-nsx", "secret-secretish-nsx")
			switch v := out.(type) {
			case *corev1.ConfigMap:
				if v.Data != nil || v.BinaryData != nil {
					t.Errorf("placeholder holds keys: %v %v", v.Data, v.BinaryData)
				}
			case *corev1.Secret:
				if v.Data != nil {
					t.Errorf("placeholder holds keys: %v", v.Data)
				}
			}
			_, err = Content(out)
			var e *NotHeldError
			if !errors.As(err, &e) || e.Reason != NotServed || e.Namespace != "ns" {
				t.Errorf("Content = %v, want a NotHeldError for an unserved namespace", err)
			}
			if strings.Contains(err.Error(), "value") {
				t.Errorf("error %q names content", err)
			}
			// Idempotent: a placeholder stays one, even where served.
			again, err := Slimmer{}.Slim(out)
			if err != nil || again != out {
				t.Errorf("Slim(placeholder) = %v, %v; want it unchanged", again, err)
			}
		})
	}
}

func metaOf(o client.Object) metav1.ObjectMeta {
	switch v := o.(type) {
	case *corev1.ConfigMap:
		return v.ObjectMeta
	case *corev1.Secret:
		return v.ObjectMeta
	}
	return metav1.ObjectMeta{}
}

// TestReaderPlaceholders: the Reader never hashes a placeholder as absent.
// One of an unserved namespace is read live within the budget (it was
// cached before the namespace became served); without budget, or over the
// key bound, the lookup fails and names the source.
func TestReaderPlaceholders(t *testing.T) {
	unserved := Slimmer{Serves: func(string) bool { return false }}
	cached := func(in client.Object) client.Object {
		out, err := unserved.Slim(in.DeepCopyObject())
		if err != nil {
			t.Fatal(err)
		}
		return out.(client.Object)
	}
	app := cm("app", "ns", map[string]string{"k": "v"})
	big := cm("big", "ns", manyKeys(5))
	liveObjs := []client.Object{app.DeepCopy(), big.DeepCopy()}
	tests := map[string]struct {
		cache      client.Object
		source     string
		live       bool
		wantReason string
		want       hasher.Content
	}{
		"not served when cached, read live": {cache: cached(app), source: "app", live: true, want: hasher.ConfigMapContent(app)},
		"not served when cached, no budget": {cache: cached(app), source: "app", wantReason: NotServed},
		"over the bound in the cache":       {cache: mustSlimWith(t, Slimmer{MaxKeys: 4}, big), source: "big", live: true, wantReason: TooManyKeys},
		"over the bound live":               {cache: cached(big), source: "big", live: true, wantReason: TooManyKeys},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			r := Reader{Cache: fake.NewClientBuilder().WithObjects(tc.cache).Build(), MaxKeys: 4}
			if tc.live {
				r.Live = fake.NewClientBuilder().WithObjects(liveObjs...).Build()
			}
			c, found, err := r.Lookup(t.Context(), "ns")(hasher.Source{Kind: hasher.ConfigMap, Name: tc.source})
			if tc.wantReason == "" {
				if err != nil || !found || !sameContent(c, tc.want) {
					t.Errorf("Lookup = %v, %v, %v; want the live content", c, found, err)
				}
				return
			}
			var e *NotHeldError
			if !errors.As(err, &e) || e.Reason != tc.wantReason || found {
				t.Errorf("Lookup = %v, %v, %v; want a NotHeldError %s, never absent", c, found, err, tc.wantReason)
			}
			if err != nil && !strings.Contains(err.Error(), "configmap/"+tc.source) {
				t.Errorf("error %q does not name the source", err)
			}
		})
	}
}

func mustSlimWith[T client.Object](t *testing.T, s Slimmer, obj T) T {
	t.Helper()
	out, err := s.Slim(obj.DeepCopyObject())
	if err != nil {
		t.Fatal(err)
	}
	return out.(T)
}

// An ignored source enters a checksum as a fixed marker, so its placeholder
// (over the key bound, or of a namespace not served) is content enough:
// Ignored, no digests, no error. Before, it was a NotHeldError, and every
// reader of it was left unstamped and never re-stamped.
func TestIgnoredPlaceholderIsContent(t *testing.T) {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "generated",
		Annotations: map[string]string{contract.IgnoreAnnotation: contract.IgnoreTrue}},
		Data: map[string]string{"a": "1", "b": "2"}}
	for name, s := range map[string]Slimmer{
		"over the key bound": {MaxKeys: 1},
		"not served":         {Serves: func(string) bool { return false }},
	} {
		slim, err := s.Slim(cm.DeepCopy())
		if err != nil {
			t.Fatal(err)
		}
		c, err := Content(slim)
		if err != nil || !c.Ignored || len(c.Data) != 0 {
			t.Errorf("%s: Content = %+v, %v; want ignored, no digests, no error", name, c, err)
		}
	}
}
