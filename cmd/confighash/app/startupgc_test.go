package app

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/confighash/confighash/internal/workload"
)

func TestStartupFreeRunsOnceAfterSync(t *testing.T) {
	synced := make(chan struct{})
	frees := 0
	s := startupFree{
		ready: func(ctx context.Context) bool {
			select {
			case <-synced:
				return true
			case <-ctx.Done():
				return false
			}
		},
		settle: func(context.Context) bool { return true },
		free:   func() { frees++ },
	}
	done := make(chan error)
	go func() { done <- s.Start(context.Background()) }()
	close(synced)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if frees != 1 {
		t.Errorf("freed %d times after sync, want once", frees)
	}
}

// TestStartupFreeTightensBeforeItFrees: the collector's target is lowered
// before the forced collection, so that the heap's next target is computed
// from what is live at the lower percentage.
func TestStartupFreeTightensBeforeItFrees(t *testing.T) {
	var calls []string
	s := startupFree{ready: func(context.Context) bool { return true }, settle: func(context.Context) bool { return true },
		free: func() { calls = append(calls, "free") }, tighten: func() { calls = append(calls, "tighten") }}
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(calls, ","); got != "tighten,free" {
		t.Errorf("calls %s, want tighten,free", got)
	}
}

// TestTightenGC: settledGCPercent, unless the operator set GOGC.
func TestTightenGC(t *testing.T) {
	for name, tc := range map[string]struct {
		gogc string
		want int
	}{"GOGC unset": {"", settledGCPercent}, "GOGC set": {"200", -1}} {
		t.Run(name, func(t *testing.T) {
			got := -1
			tightenGC(func(k string) string {
				if k == "GOGC" {
					return tc.gogc
				}
				return ""
			}, func(p int) int { got = p; return 100 })
			if got != tc.want {
				t.Errorf("set GC percent %d, want %d (-1: not set)", got, tc.want)
			}
		})
	}
}

func TestStartupFreeNotWhenStoppedBeforeSync(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	frees := 0
	s := startupFree{ready: func(ctx context.Context) bool { <-ctx.Done(); return false },
		settle: func(context.Context) bool { return true }, free: func() { frees++ }}
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if frees != 0 {
		t.Errorf("freed %d times though the caches never synced", frees)
	}
}

func TestStartupFreeWaitsForTheBurstToSettle(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	frees := 0
	s := startupFree{ready: func(context.Context) bool { return true },
		settle: func(ctx context.Context) bool { <-ctx.Done(); return false }, free: func() { frees++ }}
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if frees != 0 {
		t.Errorf("freed %d times though the start-up burst never settled", frees)
	}
}

// TestSettled: the burst is over at the first tick that saw less than
// quiet allocated, or after max ticks.
func TestSettled(t *testing.T) {
	ctx := context.Background()
	for name, tc := range map[string]struct {
		allocs    []uint64 // allocated() at the start, then at each tick
		max       int
		wantTicks int
	}{
		"quiet at once":        {allocs: []uint64{100, 100}, max: 10, wantTicks: 1},
		"busy then quiet":      {allocs: []uint64{0, 50, 100, 105}, max: 10, wantTicks: 3},
		"just not quiet":       {allocs: []uint64{0, 10, 15}, max: 10, wantTicks: 2},
		"never quiet, bounded": {allocs: []uint64{0, 50, 100, 150, 200}, max: 3, wantTicks: 3},
	} {
		t.Run(name, func(t *testing.T) {
			calls := 0
			allocated := func() uint64 { v := tc.allocs[calls]; calls++; return v }
			tick := make(chan time.Time, len(tc.allocs))
			for range len(tc.allocs) {
				tick <- time.Time{}
			}
			if !settled(ctx, allocated, tick, 10, tc.max) {
				t.Fatal("not settled")
			}
			if got := len(tc.allocs) - len(tick); got != tc.wantTicks {
				t.Errorf("settled after %d ticks, want %d", got, tc.wantTicks)
			}
		})
	}
}

func TestSettledStopsWithItsContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if settled(ctx, func() uint64 { return 0 }, make(chan time.Time), 10, 5) {
		t.Error("settled though the context ended before any tick")
	}
}

func TestHeapAllocatedGrows(t *testing.T) {
	before := heapAllocated()
	sink := make([]byte, 1<<20)
	runtime.KeepAlive(sink)
	if after := heapAllocated(); after < before+1<<20 {
		t.Errorf("allocated %d, then %d after 1 MiB more", before, after)
	}
}

// indexerManager is a manager with only a field indexer.
type indexerManager struct {
	manager.Manager
	idx client.FieldIndexer
}

func (m indexerManager) GetFieldIndexer() client.FieldIndexer { return m.idx }

type fakeIndexer struct{ fail bool }

func (f fakeIndexer) IndexField(context.Context, client.Object, string, client.IndexerFunc) error {
	if f.fail {
		return errors.New("no")
	}
	return nil
}

func isClosed(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

func TestWatchIndexesClosesOnceEveryBuiltinKindIsIndexed(t *testing.T) {
	ctx := context.Background()
	custom := workload.Kind{Mutable: true, TemplatePath: []string{"spec", "template"}}
	kinds := workload.Registry{kind(t, "Deployment"), kind(t, "StatefulSet"), custom}
	w := watchIndexes(indexerManager{idx: fakeIndexer{}}, kinds)
	idx := w.GetFieldIndexer()
	if err := idx.IndexField(ctx, &appsv1.Deployment{}, "f", nil); err != nil {
		t.Fatal(err)
	}
	// Twice the same kind, and a kind the hook does not index, are not all.
	if err := idx.IndexField(ctx, &appsv1.Deployment{}, "f", nil); err != nil {
		t.Fatal(err)
	}
	if err := idx.IndexField(ctx, &corev1.Pod{}, "f", nil); err != nil {
		t.Fatal(err)
	}
	if isClosed(w.indexed) {
		t.Fatal("indexed before StatefulSets were")
	}
	if err := idx.IndexField(ctx, &appsv1.StatefulSet{}, "f", nil); err != nil {
		t.Fatal(err)
	}
	if !isClosed(w.indexed) {
		t.Error("not indexed once every built-in kind was")
	}
}

func TestWatchIndexesFailedIndexDoesNotCount(t *testing.T) {
	w := watchIndexes(indexerManager{idx: fakeIndexer{fail: true}}, workload.Registry{kind(t, "Deployment")})
	if err := w.GetFieldIndexer().IndexField(context.Background(), &appsv1.Deployment{}, "f", nil); err == nil {
		t.Fatal("the index's error was swallowed")
	}
	if isClosed(w.indexed) {
		t.Error("indexed though the index failed")
	}
}

func TestWatchIndexesNoBuiltinKind(t *testing.T) {
	w := watchIndexes(indexerManager{idx: fakeIndexer{}}, workload.Registry{{Mutable: true, TemplatePath: []string{"spec", "template"}}})
	if !isClosed(w.indexed) {
		t.Error("waits for indexes the hook never makes")
	}
}

func kind(t *testing.T, name string) workload.Kind {
	t.Helper()
	k, ok := workload.Kinds().Of(appsv1.SchemeGroupVersion.WithKind(name))
	if !ok {
		t.Fatalf("no kind %s", name)
	}
	return k
}
