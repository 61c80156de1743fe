package sources

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/confighash/confighash/hasher"
)

// A source the cache lacks but a live GET finds (a Helm release Secret
// left out of the watch, one created a moment ago) costs one GET per TTL,
// as a missing one does, not one per admission.
func TestReaderRemembersLiveReads(t *testing.T) {
	found := hasher.Source{Kind: hasher.Secret, Name: "release"}
	missing := hasher.Source{Kind: hasher.ConfigMap, Name: "gone"}
	liveSecret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "release"}, Data: map[string][]byte{"release": []byte("v")}}
	tests := map[string]struct {
		src      hasher.Source
		wantGets int64
	}{
		"found live": {src: found, wantGets: 1},
		"missing":    {src: missing, wantGets: 1},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			now := time.Unix(1000, 0)
			var gets atomic.Int64
			live := NewRecentReads(countGets(fake.NewClientBuilder().WithObjects(liveSecret.DeepCopy()).Build(), &gets), DefaultMissTTL, DefaultRecentWeight, func() time.Time { return now })
			r := Reader{Cache: fake.NewClientBuilder().Build(), Live: live}
			var first hasher.Content
			for i := range 5 {
				c, ok, err := r.Lookup(context.Background(), "ns")(tc.src)
				if err != nil && (i == 0 || !isUnconfirmed(err)) {
					t.Fatal(err)
				}
				if ok != (tc.src == found) {
					t.Fatalf("lookup %d: found %v", i, ok)
				}
				if i == 0 {
					first = c
				} else if c.Data["release"] != first.Data["release"] {
					t.Errorf("lookup %d: remembered content differs from the live read's", i)
				}
			}
			if got := gets.Load(); got != tc.wantGets {
				t.Errorf("%d live GETs for 5 lookups, want %d", got, tc.wantGets)
			}
			now = now.Add(DefaultMissTTL)
			if _, _, err := r.Lookup(context.Background(), "ns")(tc.src); err != nil {
				t.Fatal(err)
			}
			if got := gets.Load(); got != tc.wantGets+1 {
				t.Errorf("after the TTL: %d live GETs, want %d", got, tc.wantGets+1)
			}
		})
	}
}

func TestRecentReads(t *testing.T) {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "served", Labels: map[string]string{"a": "b"},
		Annotations: map[string]string{"big": "not kept"}}}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "s"}, Data: map[string][]byte{"k": []byte("hunter2")}}
	var gets atomic.Int64
	r := NewRecentReads(countGets(fake.NewClientBuilder().WithObjects(ns, secret).Build(), &gets), time.Hour, 10, nil)
	ctx := context.Background()
	for range 3 {
		var got corev1.Namespace
		if err := r.Get(ctx, client.ObjectKey{Name: "served"}, &got); err != nil {
			t.Fatal(err)
		}
		if got.Labels["a"] != "b" {
			t.Errorf("namespace labels %v", got.Labels)
		}
		if err := r.Get(ctx, client.ObjectKey{Name: "absent"}, &corev1.Namespace{}); !apierrors.IsNotFound(err) {
			t.Errorf("absent namespace: %v, want NotFound", err)
		}
	}
	if got := gets.Load(); got != 2 {
		t.Errorf("%d GETs for 3 rounds of a found and a missing namespace, want 2", got)
	}
	// What is held is trimmed: no annotation of a namespace, no value of a
	// Secret.
	held, _ := r.m.get(recentKey{"namespaces", "", "served"})
	if len(held.obj.GetAnnotations()) != 0 {
		t.Errorf("held namespace keeps annotations %v", held.obj.GetAnnotations())
	}
	if err := r.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "s"}, &corev1.Secret{}); err != nil {
		t.Fatal(err)
	}
	held, _ = r.m.get(recentKey{"secrets", "ns", "s"})
	if s := held.obj.(*corev1.Secret); string(s.Data["k"]) == "hunter2" || len(s.Data["k"]) != len(hasher.Digest{}) {
		t.Errorf("held Secret keeps %q, want its digest", s.Data["k"])
	}
}

// TestRecentReadsUnderPreferLive: under PreferLive an answer is taken from
// memory only if its GET was sent since the caller began; one sent before,
// however recent, may predate a write that completed before the caller's
// request (a ConfigMap written, then the Deployment that reads it).
func TestRecentReadsUnderPreferLive(t *testing.T) {
	c := newClock()
	src := cm("c", "ns", map[string]string{"v": "one"})
	live := fake.NewClientBuilder().WithObjects(src).Build()
	var gets atomic.Int64
	r := NewRecentReads(countGets(live, &gets), time.Hour, 100, c.now)
	read := func(ctx context.Context) string {
		t.Helper()
		var got corev1.ConfigMap
		if err := r.Get(ctx, client.ObjectKeyFromObject(src), &got); err != nil {
			t.Fatal(err)
		}
		return string(got.BinaryData["v"])
	}
	began := c.now()
	first := read(preferLiveSince(context.Background(), began))
	// Written after that GET; a caller that began after the write must
	// see it.
	src.Data["v"] = "two"
	if err := live.Update(context.Background(), src); err != nil {
		t.Fatal(err)
	}
	c.add(time.Millisecond)
	if read(preferLiveSince(context.Background(), began)) != first || gets.Load() != 1 {
		t.Errorf("a caller that began before the first GET was sent: %d GETs, want the remembered answer", gets.Load())
	}
	if got := read(preferLiveSince(context.Background(), c.now())); got == first || gets.Load() != 2 {
		t.Errorf("a caller that began after the write got the answer of a GET sent before it (%d GETs)", gets.Load())
	}
	if read(context.Background()); gets.Load() != 2 {
		t.Errorf("without PreferLive: %d GETs, want the remembered answer", gets.Load())
	}
}

// The memory stays within its weight, counted in keys: a source with more
// keys than the whole bound is not held at all.
func TestRecentReadsWeight(t *testing.T) {
	data := map[string]string{}
	for _, k := range []string{"a", "b", "c", "d", "e"} {
		data[k] = k
	}
	big := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "big"}, Data: data}
	var gets atomic.Int64
	r := NewRecentReads(countGets(fake.NewClientBuilder().WithObjects(big).Build(), &gets), time.Hour, 4, nil)
	for range 2 {
		if err := r.Get(context.Background(), client.ObjectKeyFromObject(big), &corev1.ConfigMap{}); err != nil {
			t.Fatal(err)
		}
	}
	if got := gets.Load(); got != 2 {
		t.Errorf("%d GETs, want 2: a source over the weight is not held", got)
	}
	for _, n := range []string{"x1", "x2", "x3", "x4", "x5", "x6"} {
		_ = r.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: n}, &corev1.ConfigMap{})
	}
	if got := r.m.len(); got > 4 {
		t.Errorf("%d entries held, want at most 4", got)
	}
}

// A remembered source is slimmed under the same key bound as the cache: one
// with more keys than DefaultMaxKeys, under a higher --max-source-keys,
// comes back from memory with its digests, as a fresh GET gives them.
func TestRecentReadsKeepsTheKeyBound(t *testing.T) {
	data := make(map[string]string, DefaultMaxKeys+1)
	for i := range DefaultMaxKeys + 1 {
		data[fmt.Sprintf("k%d", i)] = "v"
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "wide"}, Data: data}
	var gets atomic.Int64
	r := NewRecentReads(countGets(fake.NewClientBuilder().WithObjects(cm).Build(), &gets), time.Hour, 4*DefaultMaxKeys, nil)
	r.Slimmer = Slimmer{MaxKeys: 2 * DefaultMaxKeys}
	reader := Reader{Cache: fake.NewClientBuilder().Build(), Live: r, MaxKeys: 2 * DefaultMaxKeys}
	for i := range 2 {
		c, found, err := reader.Lookup(context.Background(), "ns")(hasher.Source{Kind: hasher.ConfigMap, Name: "wide"})
		if err != nil || !found || len(c.Data) != DefaultMaxKeys+1 {
			t.Fatalf("lookup %d: %d keys, found %v, err %v; want %d keys", i, len(c.Data), found, err, DefaultMaxKeys+1)
		}
	}
	if got := gets.Load(); got != 1 {
		t.Errorf("%d GETs, want 1: the second lookup is answered from memory", got)
	}
}

// TestRecentReadsShareAGetInFlight: callers that began before a GET in
// flight was sent share it, present or missing; one that began after it
// was sent makes its own.
func TestRecentReadsShareAGetInFlight(t *testing.T) {
	c := newClock()
	release := make(chan struct{})
	var gets atomic.Int64
	apiserver := interceptor.NewClient(fake.NewClientBuilder().WithObjects(cm("c", "ns", map[string]string{"v": "1"})).Build(), interceptor.Funcs{
		Get: func(ctx context.Context, cl client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			gets.Add(1)
			<-release
			return cl.Get(ctx, key, obj, opts...)
		},
	})
	r := NewRecentReads(apiserver, time.Hour, 100, c.now)
	read := func(since time.Time, name string) <-chan error {
		done := make(chan error, 1)
		go func() {
			var got corev1.ConfigMap
			done <- r.Get(preferLiveSince(context.Background(), since), client.ObjectKey{Namespace: "ns", Name: name}, &got)
		}()
		return done
	}
	began := c.now()
	a := read(began, "c")
	eventually(t, "no GET sent", func() bool { return gets.Load() == 1 })
	b := read(began, "c")
	c.add(time.Millisecond)
	late := read(c.now(), "c")
	eventually(t, "a caller begun after the GET in flight was sent did not send its own", func() bool { return gets.Load() == 2 })
	missA, missB := read(began, "gone"), read(began, "gone")
	eventually(t, "no GET of the missing one", func() bool { return gets.Load() >= 3 })
	close(release)
	for _, ch := range []<-chan error{a, b, late} {
		if err := <-ch; err != nil {
			t.Fatal(err)
		}
	}
	for _, ch := range []<-chan error{missA, missB} {
		if err := <-ch; !apierrors.IsNotFound(err) || remembered(err) {
			t.Errorf("a shared GET that found nothing: %v, want a plain NotFound", err)
		}
	}
	if n := gets.Load(); n != 3 {
		t.Errorf("%d GETs, want 3: one shared by two callers, one for the later caller, one shared for the missing source", n)
	}
}
