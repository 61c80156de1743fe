package app

import (
	"context"
	"os"
	"reflect"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/confighash/confighash/internal/workload"
)

// startupFree returns the start-up burst's garbage to the OS, once, when a
// set of caches has synced and the work their first fill brings (the hook
// re-checks every reader of every source listed) is over. Filling a cache
// decodes every object of the cluster whole before the transforms slim it,
// so the heap peaks at several times what the caches then keep; the runtime
// hands those freed pages back only slowly. One forced collection that
// returns every free page brings RSS down to what is held, at the cost of
// one collection.
type startupFree struct {
	// ready blocks until the caches are filled, or ctx ends (false).
	ready func(ctx context.Context) bool
	// settle blocks until the burst is over, or ctx ends (false).
	settle func(ctx context.Context) bool
	// free collects and returns the free pages: debug.FreeOSMemory.
	free func()
	// tighten lowers the collector's target before the free: see
	// tightenGC. nil leaves it.
	tighten func()
	// leader: the caches are the hook's, which fill on the leader only.
	leader bool
	what   string
}

func (s startupFree) Start(ctx context.Context) error {
	if s.ready(ctx) && s.settle(ctx) {
		if s.tighten != nil {
			s.tighten()
		}
		s.free()
		log.FromContext(ctx).Info("returned the start-up heap to the OS", "caches", s.what)
	}
	// Done: the manager keeps running without it.
	return nil
}

// NeedLeaderElection: the webhook's caches fill on every replica, the
// hook's on the leader only.
func (s startupFree) NeedLeaderElection() bool { return s.leader }

// The start-up burst is over when the process allocates less than
// quietBytes in a quietTick, or after settleTicks in any case (a busy
// cluster is never quiet, and its start-up is long over by then).
const (
	quietTick   = time.Second
	quietBytes  = 1 << 20
	settleTicks = 120
)

// settled waits until allocated, the bytes allocated so far, grows by less
// than quiet between two ticks, or for at most max ticks. It is false only
// when ctx ends first.
func settled(ctx context.Context, allocated func() uint64, tick <-chan time.Time, quiet uint64, max int) bool {
	last := allocated()
	for range max {
		select {
		case <-tick:
		case <-ctx.Done():
			return false
		}
		now := allocated()
		if now-last < quiet {
			return true
		}
		last = now
	}
	return true
}

// heapAllocated is the bytes the process has allocated on the heap so far.
func heapAllocated() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

// settleQuietly is settled with the process's own allocations and a real
// ticker.
func settleQuietly(ctx context.Context) bool {
	t := time.NewTicker(quietTick)
	defer t.Stop()
	return settled(ctx, heapAllocated, t.C, quietBytes, settleTicks)
}

// settledGCPercent is the collector's GOGC once the caches have settled.
// At the default 100 the heap grows to twice what is live before each
// collection, and the cached copies are most of what is live: in the tenant
// bench (docs/benchmarks.md) that slack alone was some 40 MiB. Past the
// start-up burst confighash allocates little (an admission, a re-stamp, a
// watch event), so collecting at a quarter more than live costs few
// collections; each marks the live heap, some tens of milliseconds of CPU
// at 50 MiB. The start-up burst, which allocates several times what it
// keeps, runs at the default.
const settledGCPercent = 25

// tightenGC sets settledGCPercent, unless GOGC is set: the operator's
// choice stands.
func tightenGC(getenv func(string) string, set func(int) int) {
	if getenv("GOGC") != "" {
		return
	}
	set(settledGCPercent)
}

// addStartupFree frees once the webhook's caches have synced (every
// replica), and once more on the leader after the hook's workload caches
// have: those fill a moment later, when the hook starts, and the hook's
// start-up re-check follows. hook is the
// manager addHook was given (see watchIndexes).
func addStartupFree(mgr manager.Manager, hook *indexWatch) error {
	c := mgr.GetCache()
	tighten := func() { tightenGC(os.Getenv, debug.SetGCPercent) }
	if err := mgr.Add(startupFree{ready: c.WaitForCacheSync, settle: settleQuietly, free: debug.FreeOSMemory, tighten: tighten, what: "sources"}); err != nil {
		return err
	}
	workloads := func(ctx context.Context) bool {
		select {
		case <-hook.indexed:
		case <-ctx.Done():
			return false
		}
		// The indexes started the workload informers: the cache now
		// waits for them too.
		return c.WaitForCacheSync(ctx)
	}
	return mgr.Add(startupFree{ready: workloads, settle: settleQuietly, free: debug.FreeOSMemory, tighten: tighten, leader: true, what: "workloads"})
}

// indexWatch is the manager the hook is set up with: it tells when the hook
// has indexed, and so started the informers of, every built-in workload
// kind. The hook indexes them when it starts, on the leader only.
type indexWatch struct {
	manager.Manager
	indexer *watchingIndexer
	indexed <-chan struct{}
}

// watchIndexes wraps mgr; indexed closes once every built-in mutable kind
// of kinds has been indexed through it (at once when there is none).
func watchIndexes(mgr manager.Manager, kinds workload.Registry) *indexWatch {
	want := map[reflect.Type]bool{}
	for _, k := range kinds.Mutable() {
		if !k.Unstructured() {
			want[reflect.TypeOf(k.New())] = true
		}
	}
	done := make(chan struct{})
	w := &watchingIndexer{FieldIndexer: mgr.GetFieldIndexer(), want: want, done: done}
	if len(want) == 0 {
		close(done)
	}
	return &indexWatch{Manager: mgr, indexer: w, indexed: done}
}

func (m *indexWatch) GetFieldIndexer() client.FieldIndexer { return m.indexer }

// watchingIndexer closes done when every type of want has been indexed.
type watchingIndexer struct {
	client.FieldIndexer
	mu   sync.Mutex
	want map[reflect.Type]bool
	done chan struct{}
}

func (w *watchingIndexer) IndexField(ctx context.Context, obj client.Object, field string, extract client.IndexerFunc) error {
	if err := w.FieldIndexer.IndexField(ctx, obj, field, extract); err != nil {
		return err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	t := reflect.TypeOf(obj)
	if w.want[t] {
		delete(w.want, t)
		if len(w.want) == 0 {
			close(w.done)
		}
	}
	return nil
}
