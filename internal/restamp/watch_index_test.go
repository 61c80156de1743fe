package restamp

import (
	"context"
	"errors"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/confighash/confighash/internal/injection"
	"github.com/confighash/confighash/internal/workload"
)

// countingIndexer records IndexField calls, by the object's Go type.
type countingIndexer struct {
	mu    sync.Mutex
	calls []string
	err   error
}

func (c *countingIndexer) IndexField(_ context.Context, obj client.Object, _ string, _ client.IndexerFunc) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls = append(c.calls, typeOf(obj))
	return c.err
}

func (c *countingIndexer) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.calls)
}

func typeOf(obj client.Object) string {
	k, ok := workload.Kinds().For(obj)
	if !ok {
		return "?"
	}
	return k.Name()
}

// indexingManager is a manager whose field indexer counts: an index is
// what starts a kind's informer.
type indexingManager struct {
	manager.Manager
	indexer *countingIndexer
}

func (m indexingManager) GetFieldIndexer() client.FieldIndexer { return m.indexer }

// TestSetupCachesNoWorkload: Setup, which runs on every replica, indexes
// (and so caches) no workload kind: followers never run the hook, so they
// must not hold the cluster's workloads. The index waits for the hook's
// sources, which start on the leader only.
func TestSetupCachesNoWorkload(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	// Nothing listens there: Setup must not need the apiserver.
	mgr, err := manager.New(&rest.Config{Host: "http://127.0.0.1:1"}, manager.Options{Scheme: scheme,
		Metrics: metricsserver.Options{BindAddress: "0"}})
	if err != nil {
		t.Fatal(err)
	}
	m := indexingManager{Manager: mgr, indexer: &countingIndexer{}}
	o := Config{Options: DefaultOptions(), Key: []byte("k"), MaxSourceKeys: 10, Kinds: workload.Kinds(),
		Policy: injection.Policy{}, Probe: func(context.Context, workload.Kind) (bool, error) { return false, nil }}
	if err := Setup(context.Background(), m, o); err != nil {
		t.Fatal(err)
	}
	if n := m.indexer.count(); n != 0 {
		t.Errorf("Setup indexed %d workload kinds (%v); every replica would cache them", n, m.indexer.calls)
	}
}

// fakeSource records when it starts, and whether the gate was open then.
type fakeSource struct {
	gate    *indexGate
	started bool
	indexed int
	synced  bool
}

func (f *fakeSource) Start(context.Context, workqueue.TypedRateLimitingInterface[Request]) error {
	f.started = true
	f.indexed = len(f.gate.watched.list())
	return nil
}

func (f *fakeSource) WaitForSync(context.Context) error {
	f.synced = true
	return nil
}

// TestAfterIndex: the hook's sources start only once every built-in kind is
// indexed and followed, however many start at once; the index is made
// once; the sources' syncs are waited for; and an index that fails stops
// every source.
func TestAfterIndex(t *testing.T) {
	builtin := workload.Registry{}
	for _, k := range workload.Kinds().Mutable() {
		if !k.Unstructured() {
			builtin = append(builtin, k)
		}
	}
	idx := &countingIndexer{}
	gate := &indexGate{kinds: builtin, indexer: idx, watched: newWatched()}
	srcs := make([]*fakeSource, 6)
	var wg sync.WaitGroup
	for i := range srcs {
		srcs[i] = &fakeSource{gate: gate}
		a := afterIndex{gate, srcs[i]}
		wg.Go(func() {
			if err := a.Start(context.Background(), nil); err != nil {
				t.Error(err)
			}
			if err := a.WaitForSync(context.Background()); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if idx.count() != len(builtin) {
		t.Errorf("indexed %v, want each of the %d built-in kinds once", idx.calls, len(builtin))
	}
	for i, s := range srcs {
		if !s.started || !s.synced || s.indexed != len(builtin) {
			t.Errorf("source %d: started %v, synced %v, with %d kinds followed; want after all %d", i, s.started, s.synced, s.indexed, len(builtin))
		}
	}

	failing := &indexGate{kinds: builtin, indexer: &countingIndexer{err: errors.New("no mapping")}, watched: newWatched()}
	s := &fakeSource{gate: failing}
	if err := (afterIndex{failing, s}).Start(context.Background(), nil); err == nil || s.started {
		t.Errorf("a failed index: Start = %v, source started %v", err, s.started)
	}
	if len(failing.watched.list()) != 0 {
		t.Error("a kind whose index failed is followed")
	}
}
