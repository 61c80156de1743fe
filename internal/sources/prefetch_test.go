package sources

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/confighash/confighash/hasher"
)

// TestPrefetch: the GETs a PreferLive lookup would send one after another
// are sent at once, and the lookup then reads what they found, present or
// missing, with no GET of its own; within the budget, and none under
// CacheOnly, without PreferLive, or for a source over the key bound.
func TestPrefetch(t *testing.T) {
	cfg := cm("cfg", "ns", map[string]string{"k": "v"})
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "sec"}, Data: map[string][]byte{"p": []byte("x")}}
	// The repeat comes early: it must neither cost a GET nor end the reads.
	srcs := []hasher.Source{configMapSource("cfg"), configMapSource("cfg"), {Kind: hasher.Secret, Name: "sec"}, configMapSource("gone")}
	var gets, inFlight, most atomic.Int64
	apiserver := interceptor.NewClient(fake.NewClientBuilder().WithObjects(cfg, secret).Build(), interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			gets.Add(1)
			n := inFlight.Add(1)
			defer inFlight.Add(-1)
			for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
			}
			// Long enough for the others to be sent meanwhile, if they are.
			time.Sleep(50 * time.Millisecond)
			return c.Get(ctx, key, obj, opts...)
		},
	})
	cache := fake.NewClientBuilder().WithObjects(mustSlim(t, cfg.DeepCopy())).Build()
	newReader := func() Reader {
		return Reader{Cache: cache, Live: NewRecentReads(apiserver, DefaultMissTTL, DefaultRecentWeight, nil), Misses: NewMisses(DefaultMissTTL, 8, nil)}
	}

	r := newReader()
	ctx := PreferLive(context.Background())
	r.Prefetch(ctx, "ns", refsOf(srcs))
	if g, m := gets.Load(), most.Load(); g != 3 || m != 3 {
		t.Errorf("prefetch: %d GETs, at most %d at once; want 3 (one per source), all at once", g, m)
	}
	lookup := r.Lookup(ctx, "ns")
	for _, s := range srcs {
		_, found, err := lookup(s)
		if err != nil || found != (s.Name != "gone") {
			t.Errorf("%s: found %v, %v", s, found, err)
		}
	}
	if g := gets.Load(); g != 3 {
		t.Errorf("the lookup after the prefetch sent %d GETs of its own", g-3)
	}

	for name, c := range map[string]struct {
		ctx  context.Context
		r    Reader
		srcs []hasher.Source
		want int64
	}{
		"cache only":      {CacheOnly(PreferLive(context.Background())), newReader(), srcs, 0},
		"not PreferLive":  {context.Background(), newReader(), srcs, 0},
		"within a budget": {PreferLive(context.Background()), func() Reader { r := newReader(); r.LivePerLookup = 2; return r }(), srcs, 2},
		"over the key bound": {PreferLive(context.Background()), func() Reader {
			r := newReader()
			big := cm("big", "ns", map[string]string{"a": "1", "b": "2", "c": "3"})
			r.Cache = fake.NewClientBuilder().WithObjects(mustSlimWith(t, Slimmer{MaxKeys: 2}, big)).Build()
			return r
		}(), []hasher.Source{configMapSource("big")}, 0},
	} {
		gets.Store(0)
		c.r.Prefetch(c.ctx, "ns", refsOf(c.srcs))
		if g := gets.Load(); g != c.want {
			t.Errorf("%s: %d GETs, want %d", name, g, c.want)
		}
	}
}

// refsOf reads each of srcs whole.
func refsOf(srcs []hasher.Source) []hasher.Reference {
	refs := make([]hasher.Reference, len(srcs))
	for i, s := range srcs {
		refs[i] = hasher.Reference{Source: s, AllKeys: true}
	}
	return refs
}
