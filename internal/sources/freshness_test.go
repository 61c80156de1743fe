package sources

import (
	"context"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/confighash/confighash/hasher"
)

// TestPreferLiveSeesEveryWriteBeforeIt: a lookup under PreferLive gives
// the content of every write that completed before it began, whatever
// earlier lookups read and remembered, and however recently. Here a
// ConfigMap is written twice within the memories' TTL, with a lookup (an
// admission of another reader) between the writes: that lookup LISTs and
// GETs the first write, and a lookup begun after the second write (Helm's
// Deployment update after its ConfigMap) once took that remembered GET,
// stamped the first write's content, and the hook's correction rolled the
// workload a second time.
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
