package app

import (
	"context"
	"errors"
	"testing"

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
		free: func() { frees++ },
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

func TestStartupFreeNotWhenStoppedBeforeSync(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	frees := 0
	s := startupFree{ready: func(ctx context.Context) bool { <-ctx.Done(); return false }, free: func() { frees++ }}
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if frees != 0 {
		t.Errorf("freed %d times though the caches never synced", frees)
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
