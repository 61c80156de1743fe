package sources

import (
	"bufio"
	"context"
	"sync"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/confighash/confighash/hasher"
)

// Versions tells a PreferLive lookup past its GET budget whether the
// informer cache already holds a source as the apiserver holds it. One live
// LIST of a namespace's ConfigMaps (or Secrets), metadata only, sent after
// the lookup began, gives the resourceVersion of each. A cached source
// whose resourceVersion is the listed one is the apiserver's copy as of the
// lookup's start, which is what a GET would give. Any other source (changed
// since, absent from the list, or past the pages read) keeps the cache's
// answer: the budget bounds the GETs.
//
// Why only past the budget: a consistent LIST waits for the apiserver's
// watch cache to catch up with etcd, tens of milliseconds on a quiet
// control plane, where a GET is one quorum read of a few
// (docs/benchmarks.md). A LIST covers all of a namespace's sources of a
// kind at once, and admissions that began before it was sent share it.
//
// Bounds, whatever a tenant creates: a LIST reads at most VersionsPages
// pages of VersionsPageSize names, and at most VersionsListBytes in all,
// so a namespace with more sources than that, or bulkier ones, has the
// rest not known to be current. A LIST is read as it arrives (readPage):
// it holds one read buffer and the names it keeps, never a page, so a
// tenant's annotations and managedFields cost it time, not memory. At most
// VersionsListsInFlight LISTs run at once; a lookup that would start
// another while they do is not current.
// What is held is bounded by weight (one per name) and expires with the
// TTL. A failed LIST covers nothing, and is held like any other, so it is
// sent once per admission, not once per source. It is safe for concurrent
// use.
type Versions struct {
	live     Pages
	ttl      time.Duration
	now      func() time.Time
	m        *memory[versionsKey, versionList]
	maxBytes int64
	slots    chan struct{} // one per LIST in flight

	mu     sync.Mutex
	flight map[versionsKey]*versionsCall
}

const (
	// VersionsPageSize is the names one LIST page asks for.
	VersionsPageSize = 500
	// VersionsPages is the pages one LIST reads at most.
	VersionsPages = 2
	// VersionsListsInFlight is the LISTs running at once, across
	// namespaces and kinds.
	VersionsListsInFlight = 4
)

type versionsKey struct {
	kind      hasher.Kind
	namespace string
}

// versionList is what one LIST found: each listed name's resourceVersion,
// and when the LIST was sent. A name it lacks (deleted, created since, or
// past the pages read) is simply not known to be current.
type versionList struct {
	sent     time.Time
	versions map[string]string
}

type versionsCall struct {
	done chan struct{}
	list versionList
}

// NewVersions lists live, remembering each list for ttl within weight (one
// per name held). now is the clock; nil means time.Now.
func NewVersions(live Pages, ttl time.Duration, weight int, now func() time.Time) *Versions {
	if now == nil {
		now = time.Now
	}
	return &Versions{
		live: live, ttl: ttl, now: now,
		m:        newMemory[versionsKey, versionList](ttl, weight, now),
		maxBytes: VersionsListBytes,
		slots:    make(chan struct{}, VersionsListsInFlight),
		flight:   map[versionsKey]*versionsCall{},
	}
}

// Current reports whether cached, the cache's copy of source s in
// namespace, is the version a LIST sent since the caller began (PreferLive;
// without it, now) found. A nil Versions knows nothing.
func (v *Versions) Current(ctx context.Context, namespace string, s hasher.Source, cached client.Object) bool {
	if v == nil || cached.GetResourceVersion() == "" {
		return false
	}
	since := freshSince(ctx)
	if since.IsZero() {
		since = v.now()
	}
	rv, ok := v.list(ctx, versionsKey{s.Kind, namespace}, since).versions[s.Name]
	return ok && rv == cached.GetResourceVersion()
}

// list returns a list of key whose LIST was sent at or after since: one
// held, one in flight, or a new one, shared with concurrent callers. It
// returns an empty list if ctx ends first, or if a new LIST is due and
// VersionsListsInFlight are running.
func (v *Versions) list(ctx context.Context, key versionsKey, since time.Time) versionList {
	if l, ok := v.m.get(key); ok && !l.sent.Before(since) {
		return l
	}
	call := v.start(ctx, key, since)
	select {
	case <-call.done:
		return call.list
	case <-ctx.Done():
		return versionList{}
	}
}

// start returns the LIST of key in flight if it was sent at or after
// since, or sends one. A LIST runs in its own goroutine, with ctx's values
// but not its end, for at most the TTL. With VersionsListsInFlight LISTs
// running, it sends none and returns an empty list, which is not
// remembered: the next lookup tries again.
func (v *Versions) start(ctx context.Context, key versionsKey, since time.Time) *versionsCall {
	v.mu.Lock()
	defer v.mu.Unlock()
	if call, ok := v.flight[key]; ok && !call.list.sent.Before(since) {
		return call
	}
	call := &versionsCall{done: make(chan struct{}), list: versionList{sent: v.now()}}
	select {
	case v.slots <- struct{}{}:
	default:
		close(call.done)
		return call
	}
	// A LIST sent earlier and still in flight goes on for its own callers;
	// later ones join this one.
	v.flight[key] = call
	go func() {
		lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), v.ttl)
		defer cancel()
		versions := v.read(lctx, key)
		<-v.slots
		v.mu.Lock()
		call.list.versions = versions
		if v.flight[key] == call {
			delete(v.flight, key)
		}
		if held, ok := v.m.get(key); !ok || !held.sent.After(call.list.sent) {
			v.m.add(key, call.list, 1+len(versions))
		}
		v.mu.Unlock()
		close(call.done)
	}()
	return call
}

// read LISTs key's sources live, metadata only, page by page, within
// v.maxBytes in all. A page that fails, or the budget's end, ends the
// reading, keeping the items read whole: what the rest would have listed
// is not known.
func (v *Versions) read(ctx context.Context, key versionsKey) map[string]string {
	found := map[string]string{}
	left := &budget{left: v.maxBytes}
	r := bufio.NewReaderSize(left, versionsReadBuffer)
	cont := ""
	for range VersionsPages {
		body, err := v.live.Page(ctx, key.kind, key.namespace, VersionsPageSize, cont)
		if err != nil {
			return found
		}
		left.r = body
		r.Reset(left)
		cont, err = readPage(r, found)
		_ = body.Close() // read or not, the page is done with
		if err != nil || cont == "" {
			return found
		}
	}
	return found
}
