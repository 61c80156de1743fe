package sources

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/confighash/confighash/hasher"
)

// TestReaderPreferLive: under PreferLive a source the cache holds at an old
// version is read live, within the lookup's budget; past the budget, under
// CacheOnly, for a miss remembered within the TTL, or when the live read
// fails, the cache answers. Before PreferLive a cache hit always won, so a
// cache that had not seen a write made a moment earlier stamped the old
// content.
func TestReaderPreferLive(t *testing.T) {
	old := map[string]string{"v": "old"}
	fresh := map[string]string{"v": "new"}
	cache := fake.NewClientBuilder().WithObjects(
		mustSlim(t, cm("a", "ns", old)), mustSlim(t, cm("b", "ns", old)), mustSlim(t, cm("gone", "ns", old))).Build()
	live := fake.NewClientBuilder().WithObjects(cm("a", "ns", fresh), cm("b", "ns", fresh)).Build()
	a := hasher.Source{Kind: hasher.ConfigMap, Name: "a"}
	b := hasher.Source{Kind: hasher.ConfigMap, Name: "b"}
	gone := hasher.Source{Kind: hasher.ConfigMap, Name: "gone"}
	oldC, freshC := hasher.ConfigMapContent(cm("x", "ns", old)), hasher.ConfigMapContent(cm("x", "ns", fresh))

	type read struct {
		src   hasher.Source
		want  hasher.Content
		found bool
	}
	tests := map[string]struct {
		r     Reader
		ctx   context.Context
		reads []read
	}{
		"cache first without PreferLive": {
			r:     Reader{Cache: cache, Live: live},
			ctx:   context.Background(),
			reads: []read{{a, oldC, true}},
		},
		"live first, then the cache once the budget is spent": {
			r:     Reader{Cache: cache, Live: live, LivePerLookup: 1},
			ctx:   PreferLive(context.Background()),
			reads: []read{{a, freshC, true}, {b, oldC, true}},
		},
		"a source gone live is missing although cached": {
			r:     Reader{Cache: cache, Live: live, Misses: NewMisses(DefaultMissTTL, 8, nil)},
			ctx:   PreferLive(context.Background()),
			reads: []read{{gone, hasher.Content{}, false}, {a, freshC, true}},
		},
		// PreferLive has a budget of its own: once it is spent on cached
		// sources, a source only the apiserver has is still confirmed.
		// Before, the misses shared it and "new" counted as absent.
		"a miss is confirmed after the fresh reads are spent": {
			r:     Reader{Cache: cache, Live: fake.NewClientBuilder().WithObjects(cm("a", "ns", fresh), cm("new", "ns", fresh)).Build(), LivePerLookup: 1},
			ctx:   PreferLive(context.Background()),
			reads: []read{{a, freshC, true}, {hasher.Source{Kind: hasher.ConfigMap, Name: "new"}, freshC, true}},
		},
		"cache only wins": {
			r:     Reader{Cache: cache, Live: live},
			ctx:   PreferLive(CacheOnly(context.Background())),
			reads: []read{{a, oldC, true}},
		},
		"a failed live read falls back to the cache": {
			r:     Reader{Cache: cache, Live: failingGets(t)},
			ctx:   PreferLive(context.Background()),
			reads: []read{{a, oldC, true}},
		},
		"no live reader": {
			r:     Reader{Cache: cache},
			ctx:   PreferLive(context.Background()),
			reads: []read{{a, oldC, true}},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			lookup := tc.r.Lookup(tc.ctx, "ns")
			for _, rd := range tc.reads {
				got, found, err := lookup(rd.src)
				if err != nil {
					t.Fatalf("Lookup(%v): %v", rd.src, err)
				}
				if found != rd.found || (found && !sameContent(got, rd.want)) {
					t.Errorf("Lookup(%v) = %v, %v; want %v, %v", rd.src, got, found, rd.want, rd.found)
				}
			}
		})
	}
}

// TestReaderPreferLiveRemembersMisses: a source found gone live is not read
// live again within the TTL by a lookup that began before that GET was sent
// (another admission at once), which takes it as absent; one that began
// later reads it again, since the source may have been created in between.
func TestReaderPreferLiveRemembersMisses(t *testing.T) {
	misses := NewMisses(DefaultMissTTL, 8, nil)
	r := Reader{Cache: fake.NewClientBuilder().Build(), Live: fake.NewClientBuilder().Build(), Misses: misses}
	src := hasher.Source{Kind: hasher.Secret, Name: "db"}
	began := time.Now()
	if _, found, err := r.Lookup(preferLiveSince(context.Background(), began), "ns")(src); err != nil || found {
		t.Fatalf("Lookup = %v, %v; want not found", found, err)
	}
	if !misses.Recent("ns", src, began) {
		t.Fatal("a miss read live under PreferLive was not remembered")
	}
	live := r.Live
	r.Live = panicsOnGet{}
	if _, found, err := r.Lookup(preferLiveSince(context.Background(), began), "ns")(src); err != nil || found {
		t.Fatalf("Lookup = %v, %v; want not found, from the remembered miss", found, err)
	}
	r.Live = &createdSince{Reader: live, obj: &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "db"}, Data: map[string][]byte{"k": []byte("v")}}}
	if _, found, err := r.Lookup(PreferLive(context.Background()), "ns")(src); err != nil || !found {
		t.Fatalf("a lookup begun after the miss: Lookup = %v, %v; want the source created since, read live", found, err)
	}
}

// createdSince is a live reader that now has obj.
type createdSince struct {
	client.Reader
	obj client.Object
}

func (c *createdSince) Get(ctx context.Context, key client.ObjectKey, out client.Object, _ ...client.GetOption) error {
	if key.Name != c.obj.GetName() {
		return c.Reader.Get(ctx, key, out)
	}
	c.obj.(*corev1.Secret).DeepCopyInto(out.(*corev1.Secret))
	return nil
}
