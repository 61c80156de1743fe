package sources

import (
	"bufio"
	"context"
	"sync"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/confighash/confighash/hasher"
)

// Versions tells a PreferLive lookup whether the informer cache already
// holds a source as the apiserver holds it, without a GET of that source.
// One live LIST of a namespace's ConfigMaps (or Secrets), metadata only,
// gives the resourceVersion of each; it is remembered for as long as
// RecentReads remembers a GET (its TTL). A cached source whose
// resourceVersion is the listed one was current when the LIST was served,
// which is exactly the freshness a remembered GET gives. Any other source
// (changed since, absent from the list, or past the pages read) is read
// with a GET, as without Versions.
//
// Why it exists: a GET without a resourceVersion is a quorum read, and with
// one per source, 200 Deployments created one after another, each reading
// its own ConfigMap, cost 200 of them, which made admission 2.4 to 2.7
// times the do-nothing webhook's time (docs/benchmarks.md). With Versions
// they cost about one LIST per namespace, kind and TTL.
//
// Bounds, whatever a tenant creates: a LIST reads at most VersionsPages
// pages of VersionsPageSize names, and at most VersionsListBytes in all,
// so a namespace with more sources than that, or bulkier ones, has the
// rest read with GETs. A LIST is read as it arrives (readPage): it holds
// one read buffer and the names it keeps, never a page, so a tenant's
// annotations and managedFields cost it time, not memory. At most
// VersionsListsInFlight LISTs run at once; a lookup that would start
// another while they do is not current (its sources are read with GETs).
// Concurrent lookups of one namespace and kind share one LIST; what is
// held is bounded by weight (one per name) and expires with the TTL. A
// failed LIST is remembered as covering nothing, so that a missing
// permission costs one call per three quarters of the TTL while
// admissions come (see list), not one per admission. It is safe for
// concurrent use.
//
// Its LISTs are kept off the admission path: see the package doc, "Live
// reads".
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
// namespace, is the version a LIST within the TTL found. A nil Versions
// knows nothing.
func (v *Versions) Current(ctx context.Context, namespace string, s hasher.Source, cached client.Object) bool {
	if v == nil || cached.GetResourceVersion() == "" {
		return false
	}
	rv, ok := v.list(ctx, versionsKey{s.Kind, namespace}).versions[s.Name]
	return ok && rv == cached.GetResourceVersion()
}

// list returns the list of key sent within the TTL, starting a LIST in the
// background when it is due again (past three quarters of the TTL), or, if
// there is none, waits for one, shared among concurrent callers. It
// returns an empty list if ctx ends first.
func (v *Versions) list(ctx context.Context, key versionsKey) versionList {
	l, ok := v.m.get(key)
	if age := v.now().Sub(l.sent); ok && age < v.ttl {
		if age >= v.ttl*3/4 {
			v.start(ctx, key)
		}
		return l
	}
	call := v.start(ctx, key)
	select {
	case <-call.done:
		return call.list
	case <-ctx.Done():
		return versionList{}
	}
}

// start sends a LIST of key, unless one is in flight, and returns it. It
// runs in its own goroutine, with ctx's values but not its end, for at most
// the TTL (its answer would be too old to take after that). With
// VersionsListsInFlight LISTs running, it sends none and returns an empty
// list, which is not remembered: the next lookup tries again.
func (v *Versions) start(ctx context.Context, key versionsKey) *versionsCall {
	v.mu.Lock()
	defer v.mu.Unlock()
	if call, ok := v.flight[key]; ok {
		return call
	}
	call := &versionsCall{done: make(chan struct{})}
	select {
	case v.slots <- struct{}{}:
	default:
		close(call.done)
		return call
	}
	v.flight[key] = call
	sent := v.now()
	go func() {
		lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), v.ttl)
		defer cancel()
		call.list = versionList{sent: sent, versions: v.read(lctx, key)}
		<-v.slots
		v.m.add(key, call.list, 1+len(call.list.versions))
		v.mu.Lock()
		delete(v.flight, key)
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
