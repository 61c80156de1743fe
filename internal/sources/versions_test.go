package sources

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/confighash/confighash/hasher"
)

// listed is a live reader holding ConfigMaps at versions. Its LISTs
// (metadata only, as Versions makes them) return them in name order, in
// pages of the size asked for; its GETs return one with data. It counts
// both.
type listed struct {
	names    []string // in name order, as the apiserver lists them
	versions map[string]string
	data     map[string]string
	fail     bool
	block    chan struct{} // when set, LISTs wait until it is closed
	lists    atomic.Int32
	gets     atomic.Int32
}

func (l *listed) Get(_ context.Context, key client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	l.gets.Add(1)
	out, ok := obj.(*corev1.ConfigMap)
	if !ok {
		return fmt.Errorf("a GET of %T", obj)
	}
	fresh := cm(key.Name, key.Namespace, l.data)
	fresh.ResourceVersion = l.versions[key.Name]
	fresh.DeepCopyInto(out)
	return nil
}

func (l *listed) List(_ context.Context, list client.ObjectList, opts ...client.ListOption) error {
	l.lists.Add(1)
	if l.block != nil {
		<-l.block
	}
	if l.fail {
		return errBoom
	}
	page, ok := list.(*metav1.PartialObjectMetadataList)
	if !ok {
		return fmt.Errorf("a LIST of %T, not metadata only", list)
	}
	o := (&client.ListOptions{}).ApplyOptions(opts)
	start := 0
	if o.Continue != "" {
		var err error
		if start, err = strconv.Atoi(o.Continue); err != nil {
			return err
		}
	}
	end := len(l.names)
	if o.Limit > 0 && start+int(o.Limit) < end {
		end = start + int(o.Limit)
		page.Continue = strconv.Itoa(end)
	}
	for _, n := range l.names[start:end] {
		page.Items = append(page.Items, metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: n, ResourceVersion: l.versions[n]}})
	}
	return nil
}

func cachedAt(name, rv string) *corev1.ConfigMap {
	c := cm(name, "ns", map[string]string{"v": "old"})
	c.ResourceVersion = rv
	return c
}

func configMapSource(name string) hasher.Source {
	return hasher.Source{Kind: hasher.ConfigMap, Name: name}
}

// TestVersionsCurrent: a cached source is current exactly when one LIST
// within the TTL found it at the cached version; the LIST is made once per
// namespace, kind and TTL.
func TestVersionsCurrent(t *testing.T) {
	now := time.Unix(1000, 0)
	live := &listed{names: []string{"a", "b"}, versions: map[string]string{"a": "5", "b": "7"}}
	v := NewVersions(live, 2*time.Second, DefaultRecentWeight, func() time.Time { return now })
	ctx := context.Background()
	checks := []struct {
		name    string
		rv      string
		current bool
	}{
		{"a", "5", true},
		{"b", "6", false},    // the cache has an older version
		{"gone", "3", false}, // deleted since the cache saw it
		{"a", "", false},     // no version to compare
		{"b", "7", true},
	}
	for _, c := range checks {
		if got := v.Current(ctx, "ns", configMapSource(c.name), cachedAt(c.name, c.rv)); got != c.current {
			t.Errorf("Current(%s at %q) = %v, want %v", c.name, c.rv, got, c.current)
		}
	}
	if n := live.lists.Load(); n != 1 {
		t.Fatalf("%d LISTs within the TTL, want 1", n)
	}
	// Another namespace, another kind: a LIST each.
	v.Current(ctx, "other", configMapSource("a"), cachedAt("a", "5"))
	v.Current(ctx, "ns", hasher.Source{Kind: hasher.Secret, Name: "a"}, cachedAt("a", "5"))
	if n := live.lists.Load(); n != 3 {
		t.Fatalf("%d LISTs, want 3 (one per namespace and kind)", n)
	}
	// Past the TTL the versions are read again, and a write is seen.
	live.versions["a"] = "9"
	now = now.Add(2 * time.Second)
	if v.Current(ctx, "ns", configMapSource("a"), cachedAt("a", "5")) {
		t.Error("a version listed before the TTL ran out is still taken")
	}
	if n := live.lists.Load(); n != 4 {
		t.Fatalf("%d LISTs, want 4", n)
	}
	var none *Versions
	if none.Current(ctx, "ns", configMapSource("a"), cachedAt("a", "5")) {
		t.Error("a nil Versions says a source is current")
	}
}

// TestVersionsPages: at most VersionsPages pages are read; names past the
// last one read are not known to be current.
func TestVersionsPages(t *testing.T) {
	live := &listed{versions: map[string]string{}}
	for i := range VersionsPageSize*VersionsPages + 10 {
		n := fmt.Sprintf("cm-%05d", i)
		live.names = append(live.names, n)
		live.versions[n] = "1"
	}
	v := NewVersions(live, time.Minute, 4*VersionsPageSize*VersionsPages, nil)
	ctx := context.Background()
	last := live.names[VersionsPageSize*VersionsPages-1]
	past := live.names[VersionsPageSize*VersionsPages]
	if !v.Current(ctx, "ns", configMapSource(last), cachedAt(last, "1")) {
		t.Errorf("%s, on the last page read, is not current", last)
	}
	if v.Current(ctx, "ns", configMapSource(past), cachedAt(past, "1")) {
		t.Errorf("%s, past the pages read, is taken as current", past)
	}
	if n := live.lists.Load(); n != VersionsPages {
		t.Errorf("%d LIST pages, want %d", n, VersionsPages)
	}
}

// TestVersionsFailedList: a failed LIST covers nothing, and is remembered,
// so that a LIST the apiserver refuses costs one call per TTL.
func TestVersionsFailedList(t *testing.T) {
	live := &listed{names: []string{"a"}, versions: map[string]string{"a": "5"}, fail: true}
	v := NewVersions(live, time.Minute, DefaultRecentWeight, nil)
	for range 5 {
		if v.Current(context.Background(), "ns", configMapSource("a"), cachedAt("a", "5")) {
			t.Fatal("current after a failed LIST")
		}
	}
	if n := live.lists.Load(); n != 1 {
		t.Errorf("%d LISTs, want 1", n)
	}
}

// TestVersionsSharedList: lookups of one namespace at once share one LIST;
// one whose context ends while it waits gives up without an answer.
func TestVersionsSharedList(t *testing.T) {
	live := &listed{names: []string{"a"}, versions: map[string]string{"a": "5"}, block: make(chan struct{})}
	v := NewVersions(live, time.Minute, DefaultRecentWeight, nil)
	var wg sync.WaitGroup
	var current atomic.Int32
	for range 8 {
		wg.Go(func() {
			if v.Current(context.Background(), "ns", configMapSource("a"), cachedAt("a", "5")) {
				current.Add(1)
			}
		})
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for live.lists.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	if v.Current(ctx, "ns", configMapSource("a"), cachedAt("a", "5")) {
		t.Error("a lookup whose context ended got an answer")
	}
	close(live.block)
	wg.Wait()
	if n := live.lists.Load(); n != 1 {
		t.Errorf("%d LISTs for 8 lookups at once, want 1", n)
	}
	if n := current.Load(); n != 8 {
		t.Errorf("%d of 8 lookups found the source current", n)
	}
}

// TestReaderPreferLiveWithVersions: under PreferLive, a source the cache
// holds at the listed version costs no GET; one the cache holds at an older
// version is read live, as without Versions; a placeholder is never taken
// for content.
func TestReaderPreferLiveWithVersions(t *testing.T) {
	live := &listed{names: []string{"same", "stale"}, versions: map[string]string{"same": "5", "stale": "8"}, data: map[string]string{"v": "new"}}
	same, stale := mustSlim(t, cachedAt("same", "5")), mustSlim(t, cachedAt("stale", "7"))
	cache := fake.NewClientBuilder().WithObjects(same, stale).Build()
	r := Reader{Cache: cache, Live: live, Versions: NewVersions(live, time.Minute, DefaultRecentWeight, nil)}
	lookup := r.Lookup(PreferLive(context.Background()), "ns")
	oldC := hasher.ConfigMapContent(cm("x", "ns", map[string]string{"v": "old"}))
	newC := hasher.ConfigMapContent(cm("x", "ns", map[string]string{"v": "new"}))

	if got, found, err := lookup(configMapSource("same")); err != nil || !found || !sameContent(got, oldC) {
		t.Errorf("same: %v %v %v, want the cached content", got, found, err)
	}
	if n := live.gets.Load(); n != 0 {
		t.Errorf("%d GETs for a source the cache holds at the listed version", n)
	}
	if got, found, err := lookup(configMapSource("stale")); err != nil || !found || !sameContent(got, newC) {
		t.Errorf("stale: %v %v %v, want the live content", got, found, err)
	}
	if n := live.gets.Load(); n != 1 {
		t.Errorf("%d GETs for a source the cache holds at an older version, want 1", n)
	}
	// Without PreferLive nothing is listed.
	before := live.lists.Load()
	if _, _, err := r.Lookup(context.Background(), "ns")(configMapSource("same")); err != nil {
		t.Fatal(err)
	}
	if live.lists.Load() != before {
		t.Error("a lookup without PreferLive listed")
	}
}
