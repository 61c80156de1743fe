package sources

import (
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/confighash/confighash/hasher"
)

// TestFillsAfterNamespaceServed: sources cached while their namespace was
// not served are placeholders; once Fill has read the namespace, the hook
// (no live reads) sees their content through Fills.Reader, exactly for
// the version Fill read, and nothing once the source changes.
func TestFillsAfterNamespaceServed(t *testing.T) {
	unserved := Slimmer{Serves: func(string) bool { return false }}
	app := cm("app", "team", map[string]string{"k": "v"})
	app.ResourceVersion = "7"
	app.UID = "uid-app"
	key := secret("key", "team", map[string][]byte{"k": []byte("s")})
	key.ResourceVersion = "8"
	key.UID = "uid-key"
	live := fake.NewClientBuilder().WithObjects(app.DeepCopy(), key.DeepCopy()).Build()
	cache := fake.NewClientBuilder().WithObjects(mustSlimWith(t, unserved, app), mustSlimWith(t, unserved, key)).Build()

	fills := NewFills()
	hook := Reader{Cache: fills.Reader(cache)}
	lookup := func(k hasher.Kind, name string) (hasher.Content, error) {
		c, found, err := hook.Lookup(t.Context(), "team")(hasher.Source{Kind: k, Name: name})
		if err == nil && !found {
			t.Fatalf("%s/%s looked up as absent", k, name)
		}
		return c, err
	}
	var e *NotHeldError
	if _, err := lookup(hasher.ConfigMap, "app"); !errors.As(err, &e) {
		t.Fatalf("before the fill: err = %v, want NotHeldError", err)
	}
	if err := fills.Fill(t.Context(), live, Slimmer{Serves: func(string) bool { return false }}, "team"); err != nil {
		t.Fatal(err)
	}
	if c, err := lookup(hasher.ConfigMap, "app"); err != nil || !sameContent(c, hasher.ConfigMapContent(app)) {
		t.Errorf("configmap after the fill = %v, %v; want its content", c, err)
	}
	if c, err := lookup(hasher.Secret, "key"); err != nil || !sameContent(c, hasher.SecretContent(key)) {
		t.Errorf("secret after the fill = %v, %v; want its content", c, err)
	}
	// A newer version cached as a placeholder (the fill is of the old one).
	newer := mustSlimWith(t, unserved, app)
	newer.ResourceVersion = "9"
	cache2 := fake.NewClientBuilder().WithObjects(newer, mustSlimWith(t, unserved, key)).Build()
	hook.Cache = fills.Reader(cache2)
	if _, err := lookup(hasher.ConfigMap, "app"); !errors.As(err, &e) {
		t.Errorf("a version the fill did not read: err = %v, want NotHeldError", err)
	}
	// The informer delivers the version the fill read (its store had it
	// first): still held.
	fills.Forget(key)
	if c, err := lookup(hasher.Secret, "key"); err != nil || !sameContent(c, hasher.SecretContent(key)) {
		t.Errorf("after Forget of the version held: %v, %v; want its content", c, err)
	}
	// The informer saw the secret change: forgotten.
	changed := key.DeepCopy()
	changed.ResourceVersion += "0"
	fills.Forget(changed)
	if _, err := lookup(hasher.Secret, "key"); !errors.As(err, &e) {
		t.Errorf("after Forget: err = %v, want NotHeldError", err)
	}
	fills.ForgetNamespace("team")
	if n := fills.Len(); n != 0 {
		t.Errorf("after ForgetNamespace %d sources held", n)
	}
}

// TestFillHonoursTheKeyBound: a fill holds no more than the cache would.
func TestFillHonoursTheKeyBound(t *testing.T) {
	big := cm("big", "team", manyKeys(10))
	live := fake.NewClientBuilder().WithObjects(big).Build()
	fills := NewFills()
	if err := fills.Fill(t.Context(), live, Slimmer{MaxKeys: 5}, "team"); err != nil {
		t.Fatal(err)
	}
	cached := mustSlimWith(t, Slimmer{Serves: func(string) bool { return false }}, big)
	got := &corev1.ConfigMap{}
	if err := fills.Reader(fake.NewClientBuilder().WithObjects(cached).Build()).Get(t.Context(), client.ObjectKeyFromObject(big), got); err != nil {
		t.Fatal(err)
	}
	var e *NotHeldError
	if _, err := Content(got); !errors.As(err, &e) || e.Reason != TooManyKeys {
		t.Errorf("filled %d-key source: Content err = %v, want too many keys", len(big.Data), err)
	}
}

// TestFillerNamespaceEvents: a namespace that becomes served (labelled, or
// created after start) is queued for a fill; one that stops being served
// is forgotten; those of the initial list are left alone.
func TestFillerNamespaceEvents(t *testing.T) {
	serves := func(_ string, l map[string]string) bool { return l["on"] == "yes" }
	on := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team", Labels: map[string]string{"on": "yes"}}}
	off := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team"}}
	tests := map[string]struct {
		event     func(f *Filler)
		wantQueue int
		wantHeld  int
	}{
		"labelled":            {event: func(f *Filler) { f.NamespaceHandler().OnUpdate(off, on) }, wantQueue: 1, wantHeld: 1},
		"created served":      {event: func(f *Filler) { f.NamespaceHandler().OnAdd(on, false) }, wantQueue: 1, wantHeld: 1},
		"in the initial list": {event: func(f *Filler) { f.NamespaceHandler().OnAdd(on, true) }, wantHeld: 1},
		"still served":        {event: func(f *Filler) { f.NamespaceHandler().OnUpdate(on, on) }, wantHeld: 1},
		"unlabelled":          {event: func(f *Filler) { f.NamespaceHandler().OnUpdate(on, off) }},
		"deleted":             {event: func(f *Filler) { f.NamespaceHandler().OnDelete(on) }},
		"source changed": {event: func(f *Filler) {
			changed := cm("app", "team", nil)
			changed.ResourceVersion = "2"
			f.SourceHandler().OnUpdate(nil, changed)
		}},
		// The informer's handler delivers the version the fill read.
		"source delivered as held": {event: func(f *Filler) { f.SourceHandler().OnUpdate(nil, cm("app", "team", nil)) }, wantHeld: 1},
		"source deleted":           {event: func(f *Filler) { f.SourceHandler().OnDelete(cm("app", "team", nil)) }},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			fills := NewFills()
			fills.put(mustSlim(t, cm("app", "team", map[string]string{"k": "v"})))
			f := NewFiller(fills, nil, Slimmer{}, serves)
			tc.event(f)
			if got := f.queue.Len(); got != tc.wantQueue {
				t.Errorf("queued %d fills, want %d", got, tc.wantQueue)
			}
			if got := fills.Len(); got != tc.wantHeld {
				t.Errorf("%d sources held, want %d", got, tc.wantHeld)
			}
		})
	}
}
