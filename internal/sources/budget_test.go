package sources

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/confighash/confighash/hasher"
)

func countGets(c client.WithWatch, n *atomic.Int64) client.Reader {
	return interceptor.NewClient(c, interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			n.Add(1)
			return c.Get(ctx, key, obj, opts...)
		},
	})
}

func TestReaderLiveBudget(t *testing.T) {
	names := func(n int) []hasher.Source {
		out := make([]hasher.Source, n)
		for i := range out {
			out[i] = hasher.Source{Kind: hasher.ConfigMap, Name: fmt.Sprintf("cm-%d", i)}
		}
		return out
	}
	tests := map[string]struct {
		reader    func(live client.Reader) Reader
		ctx       func() context.Context
		lookups   int // separate Lookup calls, each over all sources
		sources   int
		liveOnly  int // of sources, how many exist live (not yet cached)
		wantGets  int64
		wantFound int // of the last lookup
	}{
		"bounded per lookup": {
			reader:   func(live client.Reader) Reader { return Reader{Live: live, LivePerLookup: 3} },
			lookups:  1,
			sources:  10,
			wantGets: 3,
		},
		"default bound": {
			reader:   func(live client.Reader) Reader { return Reader{Live: live} },
			lookups:  1,
			sources:  100,
			wantGets: DefaultLivePerLookup,
		},
		"each lookup has its own budget": {
			reader:   func(live client.Reader) Reader { return Reader{Live: live, LivePerLookup: 3} },
			lookups:  2,
			sources:  10,
			wantGets: 6,
		},
		"cache only": {
			reader:   func(live client.Reader) Reader { return Reader{Live: live} },
			ctx:      func() context.Context { return CacheOnly(context.Background()) },
			lookups:  1,
			sources:  10,
			wantGets: 0,
		},
		"confirmed misses are not confirmed again": {
			reader: func(live client.Reader) Reader {
				return Reader{Live: live, LivePerLookup: 3, Misses: NewMisses(DefaultMissTTL, 100, nil)}
			},
			lookups:  2,
			sources:  3,
			wantGets: 3,
		},
		"found live, within budget": {
			reader:    func(live client.Reader) Reader { return Reader{Live: live, LivePerLookup: 3} },
			lookups:   1,
			sources:   2,
			liveOnly:  2,
			wantGets:  2,
			wantFound: 2,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var gets atomic.Int64
			var liveObjs []client.Object
			for _, s := range names(tc.liveOnly) {
				liveObjs = append(liveObjs, cm(s.Name, "ns", map[string]string{"k": "v"}))
			}
			r := tc.reader(countGets(fake.NewClientBuilder().WithObjects(liveObjs...).Build(), &gets))
			r.Cache = fake.NewClientBuilder().Build()
			ctx := context.Background()
			if tc.ctx != nil {
				ctx = tc.ctx()
			}
			found := 0
			for range tc.lookups {
				found = 0
				lookup := r.Lookup(ctx, "ns")
				for _, s := range names(tc.sources) {
					_, ok, err := lookup(s)
					if err != nil && !isUnconfirmed(err) {
						t.Fatalf("lookup %s: %v", s, err)
					}
					if ok {
						found++
					}
				}
			}
			if got := gets.Load(); got != tc.wantGets {
				t.Errorf("%d live GETs, want %d", got, tc.wantGets)
			}
			if found != tc.wantFound {
				t.Errorf("found %d, want %d", found, tc.wantFound)
			}
		})
	}
}
