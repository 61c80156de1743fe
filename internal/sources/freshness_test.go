package sources

import (
	"context"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/confighash/confighash/hasher"
)

// TestPreferLiveSeesEveryWriteBeforeIt: a lookup under PreferLive gives
// the content of every write that completed before it began, whatever
// earlier lookups read and remembered, and however recently. Here a
// ConfigMap is written twice within the memories' TTL, with a lookup (an
// admission of another reader) between the writes: that lookup LISTs and
// GETs the first write, and a lookup begun after the second write (Helm's
// Deployment update after its ConfigMap) must not take that remembered
// GET: stamped with the first write's content, the workload would be
// rolled a second time by the hook's correction.
func TestPreferLiveSeesEveryWriteBeforeIt(t *testing.T) {
	live := &listed{names: []string{"app"}, versions: map[string]string{"app": "1"}, data: map[string]string{"v": "old"}}
	cached := mustSlim(t, cachedAt("app", "1"))
	cache := fake.NewClientBuilder().WithObjects(cached).Build()
	r := Reader{
		Cache:    cache,
		Live:     NewRecentReads(live, DefaultMissTTL, DefaultRecentWeight, nil),
		Misses:   NewMisses(DefaultMissTTL, DefaultMissEntries, nil),
		Versions: NewVersions(live, DefaultMissTTL, DefaultRecentWeight, nil),
	}
	write := func(rv, value string) {
		t.Helper()
		live.versions["app"], live.data = rv, map[string]string{"v": value}
		// The informer has seen it too.
		c := cm("app", "ns", live.data)
		c.ResourceVersion = rv
		slim := mustSlim(t, c)
		cur := cachedAt("app", "")
		if err := cache.Get(context.Background(), client.ObjectKeyFromObject(c), cur); err != nil {
			t.Fatal(err)
		}
		slim.SetResourceVersion(cur.ResourceVersion)
		if err := cache.Update(context.Background(), slim); err != nil {
			t.Fatal(err)
		}
		// The fake cache sets its own version; the live one must match it.
		live.versions["app"] = slim.GetResourceVersion()
	}
	lookup := func(want string) {
		t.Helper()
		got, found, err := r.Lookup(PreferLive(context.Background()), "ns")(configMapSource("app"))
		if err != nil || !found {
			t.Fatalf("lookup: found %v, %v", found, err)
		}
		if w := hasher.ConfigMapContent(cm("app", "ns", map[string]string{"v": want})); !sameContent(got, w) {
			t.Errorf("a lookup begun after the write of %q got other content", want)
		}
	}
	start := time.Now()
	lookup("old") // the cache's first copy holds "old"
	write("2", "two")
	lookup("two")
	write("3", "three")
	lookup("three")
	if time.Since(start) >= DefaultMissTTL {
		t.Skip("the lookups took longer than the memories' TTL; nothing was remembered")
	}
}

// TestAMissCountsFromItsGet: a lookup that joins a GET already in flight
// (or takes one from memory) remembers the miss at the time that GET was
// sent, not at the time it asked. Remembered at the later time, the miss
// would look fresh to a lookup begun between the two, after the source was
// created: it would stamp the source absent without a GET of its own, and
// the hook's correction would roll the workload a second time.
func TestAMissCountsFromItsGet(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		var gets atomic.Int64
		apiserver := fake.NewClientBuilder().Build()
		live := interceptor.NewClient(apiserver, interceptor.Funcs{
			Get: func(ctx context.Context, cl client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
				if gets.Add(1) == 1 {
					<-release // sent before the source was created
					return apierrors.NewNotFound(corev1.Resource("configmaps"), key.Name)
				}
				return cl.Get(ctx, key, obj, opts...)
			},
		})
		r := Reader{
			Cache:  fake.NewClientBuilder().Build(), // the informer has not seen the create
			Live:   NewRecentReads(live, DefaultMissTTL, DefaultRecentWeight, nil),
			Misses: NewMisses(DefaultMissTTL, DefaultMissEntries, nil),
		}
		lookup := func(ctx context.Context) (found bool, err error) {
			_, found, err = r.Lookup(ctx, "ns")(configMapSource("app"))
			return found, err
		}
		began := time.Now()
		first := make(chan error, 1)
		go func() { _, err := lookup(preferLiveSince(context.Background(), began)); first <- err }()
		synctest.Wait() // its GET is in flight

		time.Sleep(time.Millisecond)
		if err := apiserver.Create(context.Background(), cm("app", "ns", map[string]string{"v": "1"})); err != nil {
			t.Fatal(err)
		}
		created := time.Now()
		time.Sleep(time.Millisecond)
		joined := make(chan error, 1)
		go func() { _, err := lookup(preferLiveSince(context.Background(), began)); joined <- err }()
		synctest.Wait() // it shares the GET in flight: begun before it was sent
		close(release)
		for _, ch := range []chan error{first, joined} {
			if err := <-ch; err != nil {
				t.Fatal(err)
			}
		}
		if n := gets.Load(); n != 1 {
			t.Fatalf("%d GETs, want the one shared", n)
		}

		found, err := lookup(preferLiveSince(context.Background(), created))
		if err != nil || !found {
			t.Errorf("a lookup begun after the create: found %v, %v; it took a miss from a GET sent before the create", found, err)
		}
	})
}

// TestACachedSourceAFreshGetMissed: the cache holds a source that a GET sent
// since the lookup began (another admission's) found missing. Either the
// source was deleted before the lookup began and the cache lags, or it was
// created after that GET and the cache has seen it. The lookup must not
// guess: taken from the cache in the first case, the stamp names content
// no pod can read and the hook rolls the workload again; taken as missing
// in the second, the hook rolls it for a create the cache already holds.
func TestACachedSourceAFreshGetMissed(t *testing.T) {
	for name, created := range map[string]bool{"deleted before": false, "created since": true} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				apiserver := fake.NewClientBuilder().Build()
				cache := fake.NewClientBuilder().Build()
				if !created {
					// The delete reached the apiserver, not yet the informer.
					if err := cache.Create(context.Background(), mustSlim(t, cm("app", "ns", map[string]string{"v": "1"}))); err != nil {
						t.Fatal(err)
					}
				}
				var gets atomic.Int64
				live := interceptor.NewClient(apiserver, interceptor.Funcs{
					Get: func(ctx context.Context, cl client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
						gets.Add(1)
						return cl.Get(ctx, key, obj, opts...)
					},
				})
				r := Reader{Cache: cache, Live: NewRecentReads(live, DefaultMissTTL, DefaultRecentWeight, nil), Misses: NewMisses(DefaultMissTTL, DefaultMissEntries, nil)}
				began := time.Now()
				time.Sleep(time.Millisecond)
				if _, found, err := r.Lookup(preferLiveSince(context.Background(), began), "ns")(configMapSource("app")); err != nil || found {
					t.Fatalf("the first admission: found %v, %v; want missing", found, err)
				}
				time.Sleep(time.Millisecond)
				if created {
					c := cm("app", "ns", map[string]string{"v": "1"})
					if err := apiserver.Create(context.Background(), c.DeepCopy()); err != nil {
						t.Fatal(err)
					}
					if err := cache.Create(context.Background(), mustSlim(t, c)); err != nil {
						t.Fatal(err)
					}
				}
				time.Sleep(time.Millisecond)
				before := gets.Load()
				_, found, err := r.Lookup(preferLiveSince(context.Background(), began), "ns")(configMapSource("app"))
				if err != nil || found != created {
					t.Errorf("an admission begun with the first: found %v, %v; want %v", found, err, created)
				}
				if n := gets.Load() - before; n != 1 {
					t.Errorf("it sent %d GETs, want 1 to settle which is right", n)
				}
			})
		})
	}
}
