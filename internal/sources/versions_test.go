package sources

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
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
	block    chan struct{} // when set, LISTs wait until it is closed or their context ends
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

// List refuses: Versions lists through Page, as a stream.
func (l *listed) List(context.Context, client.ObjectList, ...client.ListOption) error {
	return errors.New("a LIST through the client")
}

// Page serves one page of a metadata-only LIST as the apiserver writes it.
func (l *listed) Page(ctx context.Context, kind hasher.Kind, namespace string, limit int64, cont string) (io.ReadCloser, error) {
	l.lists.Add(1)
	if l.block != nil {
		select {
		case <-l.block:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if l.fail {
		return nil, errBoom
	}
	page := metav1.PartialObjectMetadataList{TypeMeta: metav1.TypeMeta{Kind: "PartialObjectMetadataList", APIVersion: "meta.k8s.io/v1"}}
	start := 0
	if cont != "" {
		var err error
		if start, err = strconv.Atoi(cont); err != nil {
			return nil, err
		}
	}
	end := len(l.names)
	if limit > 0 && start+int(limit) < end {
		end = start + int(limit)
		page.Continue = strconv.Itoa(end)
	}
	for _, n := range l.names[start:end] {
		page.Items = append(page.Items, metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: n, Namespace: namespace, ResourceVersion: l.versions[n]}})
	}
	b, err := json.Marshal(page)
	if err != nil {
		return nil, err
	}
	return io.NopCloser(bytes.NewReader(b)), nil
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
	ctx := PreferLive(context.Background())
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
// so that a LIST the apiserver refuses is sent once per admission, not once
// per source.
func TestVersionsFailedList(t *testing.T) {
	live := &listed{names: []string{"a"}, versions: map[string]string{"a": "5"}, fail: true}
	v := NewVersions(live, time.Minute, DefaultRecentWeight, nil)
	ctx := PreferLive(context.Background())
	for range 5 {
		if v.Current(ctx, "ns", configMapSource("a"), cachedAt("a", "5")) {
			t.Fatal("current after a failed LIST")
		}
	}
	if n := live.lists.Load(); n != 1 {
		t.Errorf("%d LISTs, want 1", n)
	}
}

// TestVersionsSharedList: lookups of one namespace that began before a
// LIST was sent share it; one whose context ends while it waits gives up
// without an answer.
func TestVersionsSharedList(t *testing.T) {
	live := &listed{names: []string{"a"}, versions: map[string]string{"a": "5"}, block: make(chan struct{})}
	v := NewVersions(live, time.Minute, DefaultRecentWeight, nil)
	var wg sync.WaitGroup
	var current atomic.Int32
	began := PreferLive(context.Background())
	for range 8 {
		wg.Go(func() {
			if v.Current(began, "ns", configMapSource("a"), cachedAt("a", "5")) {
				current.Add(1)
			}
		})
	}
	ctx, cancel := context.WithCancel(began)
	cancel()
	eventually(t, "the lookup sent no LIST", func() bool { return live.lists.Load() > 0 })
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

// TestReaderPreferLiveWithVersions: under PreferLive, sources the cache
// holds are read with GETs while the lookup's budget lasts; past it, one at
// the version a LIST sent since the lookup began found is taken from the
// cache with no GET, and one the cache holds at an older version keeps the
// cache's answer (the budget bounds the GETs).
func TestReaderPreferLiveWithVersions(t *testing.T) {
	live := &listed{names: []string{"first", "same", "behind"}, versions: map[string]string{"first": "2", "same": "5", "behind": "8"}, data: map[string]string{"v": "new"}}
	cache := fake.NewClientBuilder().WithObjects(mustSlim(t, cachedAt("first", "1")), mustSlim(t, cachedAt("same", "5")), mustSlim(t, cachedAt("behind", "7"))).Build()
	r := Reader{Cache: cache, Live: live, LivePerLookup: 1, Versions: NewVersions(live, time.Minute, DefaultRecentWeight, nil)}
	lookup := r.Lookup(PreferLive(context.Background()), "ns")
	oldC := hasher.ConfigMapContent(cm("x", "ns", map[string]string{"v": "old"}))
	newC := hasher.ConfigMapContent(cm("x", "ns", map[string]string{"v": "new"}))
	steps := []struct {
		name        string
		want        hasher.Content
		gets, lists int32
	}{
		{"first", newC, 1, 0},  // within the budget: a GET, no LIST
		{"same", oldC, 1, 1},   // past it, listed at the cached version
		{"behind", oldC, 1, 1}, // past it, listed newer: the cache's answer, no GET
	}
	for _, st := range steps {
		got, found, err := lookup(configMapSource(st.name))
		if err != nil || !found || !sameContent(got, st.want) {
			t.Errorf("%s: %v %v %v", st.name, got, found, err)
		}
		if g, l := live.gets.Load(), live.lists.Load(); g != st.gets || l != st.lists {
			t.Errorf("after %s: %d GETs and %d LISTs, want %d and %d", st.name, g, l, st.gets, st.lists)
		}
	}
	// Without PreferLive nothing is listed.
	if _, _, err := r.Lookup(context.Background(), "ns")(configMapSource("same")); err != nil {
		t.Fatal(err)
	}
	if live.lists.Load() != 1 {
		t.Error("a lookup without PreferLive listed")
	}
}

// clock is a settable clock that is safe to read from a LIST's goroutine.
type clock struct{ ns atomic.Int64 }

func newClock() *clock {
	c := &clock{}
	c.ns.Store(time.Unix(1000, 0).UnixNano())
	return c
}

func (c *clock) now() time.Time      { return time.Unix(0, c.ns.Load()) }
func (c *clock) add(d time.Duration) { c.ns.Add(int64(d)) }
func (v *Versions) inFlight(k versionsKey) bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	_, ok := v.flight[k]
	return ok
}

// eventually waits until cond holds, failing t after ten seconds.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal(what)
		}
		time.Sleep(time.Millisecond)
	}
}

// settled waits until no LIST of ns's ConfigMaps is in flight.
func settled(t *testing.T, v *Versions, ns string) {
	t.Helper()
	eventually(t, "the LIST never ended", func() bool { return !v.inFlight(versionsKey{hasher.ConfigMap, ns}) })
}

// currentWithin is v.Current of ConfigMap a in ns for a lookup begun at
// since, failed if it does not
// answer within a second: a lookup that has a list must not wait for the
// next one.
func currentWithin(t *testing.T, v *Versions, since time.Time, rv string) bool {
	t.Helper()
	got := make(chan bool, 1)
	go func() {
		got <- v.Current(preferLiveSince(context.Background(), since), "ns", configMapSource("a"), cachedAt("a", rv))
	}()
	select {
	case ok := <-got:
		return ok
	case <-time.After(time.Second):
		t.Fatalf("Current(a at %s) waited for a LIST", rv)
		return false
	}
}

// TestVersionsSentSinceTheCaller: a list is taken only by lookups that
// began before its LIST was sent. One that began later lists again, even
// within the TTL and with a LIST in flight: a write that completed before
// it began may be after that LIST.
func TestVersionsSentSinceTheCaller(t *testing.T) {
	c := newClock()
	live := &listed{names: []string{"a"}, versions: map[string]string{"a": "5"}}
	v := NewVersions(live, 2*time.Second, DefaultRecentWeight, c.now)
	first := c.now()
	if !currentWithin(t, v, first, "5") {
		t.Fatal("a at 5 not current after the first LIST")
	}
	live.versions["a"] = "9" // written after that LIST
	c.add(100 * time.Millisecond)
	if !currentWithin(t, v, first, "5") || live.lists.Load() != 1 {
		t.Errorf("a lookup begun before the LIST: %d LISTs, want 1, and a at 5 current", live.lists.Load())
	}
	second := c.now()
	if currentWithin(t, v, second, "5") || !currentWithin(t, v, second, "9") {
		t.Error("a lookup begun after the write took the list from before it")
	}
	if n := live.lists.Load(); n != 2 {
		t.Errorf("%d LISTs, want 2", n)
	}

	// A LIST in flight, sent before a lookup began, is not joined; one
	// sent after it is.
	live.block = make(chan struct{})
	done := make(chan bool, 3)
	current := func(since time.Time) {
		done <- v.Current(preferLiveSince(context.Background(), since), "ns", configMapSource("a"), cachedAt("a", "9"))
	}
	c.add(time.Millisecond)
	third := c.now()
	go current(third)
	eventually(t, "no LIST sent", func() bool { return live.lists.Load() == 3 })
	go current(third)
	c.add(time.Millisecond)
	go current(c.now())
	eventually(t, "a lookup begun after the LIST in flight was sent did not send its own", func() bool { return live.lists.Load() == 4 })
	close(live.block)
	for range 3 {
		if !<-done {
			t.Error("a at 9 not current")
		}
	}
	if n := live.lists.Load(); n != 4 {
		t.Errorf("%d LISTs, want 4", n)
	}
}

// TestVersionsCancelledWaiter: a lookup that gives up does not end the
// LIST it waited for; the list it brings is kept for the next lookups.
func TestVersionsCancelledWaiter(t *testing.T) {
	live := &listed{names: []string{"a"}, versions: map[string]string{"a": "5"}, block: make(chan struct{})}
	v := NewVersions(live, time.Minute, DefaultRecentWeight, nil)
	began := time.Now()
	ctx, cancel := context.WithCancel(preferLiveSince(context.Background(), began))
	done := make(chan bool)
	go func() { done <- v.Current(ctx, "ns", configMapSource("a"), cachedAt("a", "5")) }()
	eventually(t, "the lookup sent no LIST", func() bool { return live.lists.Load() > 0 })
	cancel()
	if <-done {
		t.Error("a lookup whose context ended got an answer")
	}
	close(live.block)
	settled(t, v, "ns")
	if !currentWithin(t, v, began, "5") {
		t.Error("the LIST of a lookup that gave up was not kept")
	}
	if n := live.lists.Load(); n != 1 {
		t.Errorf("%d LISTs, want 1", n)
	}
}

// TestVersionsAgeFromSend: a list is as old as its LIST's sending, not its
// answer: one whose answer came a TTL after it was sent serves the lookup
// that waited for it, and no later one.
func TestVersionsAgeFromSend(t *testing.T) {
	c := newClock()
	live := &listed{names: []string{"a"}, versions: map[string]string{"a": "5"}, block: make(chan struct{})}
	v := NewVersions(live, 2*time.Second, DefaultRecentWeight, c.now)
	done := make(chan bool)
	go func() { done <- v.Current(context.Background(), "ns", configMapSource("a"), cachedAt("a", "5")) }()
	eventually(t, "the lookup sent no LIST", func() bool { return live.lists.Load() > 0 })
	c.add(2 * time.Second)
	close(live.block) // and the next LIST does not wait
	if !<-done {
		t.Error("the lookup that waited for the LIST did not get its answer")
	}
	if !v.Current(context.Background(), "ns", configMapSource("a"), cachedAt("a", "5")) {
		t.Error("a at 5 not current after a fresh LIST")
	}
	if n := live.lists.Load(); n != 2 {
		t.Errorf("%d LISTs, want 2: a list sent a TTL ago was taken", n)
	}
}

// TestVersionsListsInFlight: at most VersionsListsInFlight LISTs run at
// once, across namespaces; a lookup that would start one more sends none,
// is not current (its source is read with a GET), and is not remembered
// as listing nothing: once a LIST ends, the next lookup lists.
func TestVersionsListsInFlight(t *testing.T) {
	live := &listed{names: []string{"a"}, versions: map[string]string{"a": "5"}, block: make(chan struct{})}
	v := NewVersions(live, time.Minute, DefaultRecentWeight, nil)
	var wg sync.WaitGroup
	for i := range VersionsListsInFlight {
		wg.Go(func() {
			v.Current(context.Background(), fmt.Sprintf("ns-%d", i), configMapSource("a"), cachedAt("a", "5"))
		})
	}
	eventually(t, "the lookups sent no LISTs", func() bool { return live.lists.Load() == VersionsListsInFlight })
	if currentWithin(t, v, time.Now(), "5") {
		t.Error("a lookup past the LISTs in flight is current")
	}
	if n := live.lists.Load(); n != VersionsListsInFlight {
		t.Errorf("%d LISTs at once, want %d", n, VersionsListsInFlight)
	}
	close(live.block)
	wg.Wait()
	eventually(t, "the LISTs never ended", func() bool { return len(v.slots) == 0 })
	if !currentWithin(t, v, time.Now(), "5") {
		t.Error("once the LISTs ended, ns is still not listed")
	}
}
