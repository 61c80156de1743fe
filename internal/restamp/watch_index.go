package restamp

import (
	"context"
	"fmt"
	"sync"

	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/confighash/confighash/internal/sources"
	"github.com/confighash/confighash/internal/workload"
)

// indexGate indexes the built-in kinds by the sources they read, once, when
// the hook's first source starts, and only then lets the kinds be
// followed (watched.add). The index is what starts a kind's informer, so
// that an index set up with the manager would cache every workload of the
// cluster on every replica, followers too, though only the leader runs the
// hook; the hook's sources start on the leader only. Every source of the
// hook waits for it: the sources' handlers look readers up in the index,
// and a workload kind's own watch must not start its informer before the
// index is there.
type indexGate struct {
	once  sync.Once
	err   error
	kinds []workload.Kind
	// indexer is the manager's field indexer; watched gets each kind once
	// its index exists.
	indexer client.FieldIndexer
	watched *watched
}

// open indexes the kinds, the first time it is called; every call returns
// the first call's error, once it is done.
func (g *indexGate) open(ctx context.Context) error {
	g.once.Do(func() {
		for _, k := range g.kinds {
			if err := g.indexer.IndexField(ctx, k.New(), sources.ReadersIndex, sources.ReadKeysOf(k)); err != nil {
				g.err = fmt.Errorf("indexing %s by sources: %w", k.GVK.Kind, err)
				return
			}
			g.watched.add(k)
		}
	})
	return g.err
}

// afterIndex is a source of the hook that starts once the gate is open.
type afterIndex struct {
	gate *indexGate
	src  source.TypedSource[Request]
}

func (a afterIndex) Start(ctx context.Context, q workqueue.TypedRateLimitingInterface[Request]) error {
	if err := a.gate.open(ctx); err != nil {
		return err
	}
	return a.src.Start(ctx, q)
}

// WaitForSync waits for the source's cache, when it has one: the
// controller starts its workers once every source has synced.
func (a afterIndex) WaitForSync(ctx context.Context) error {
	if s, ok := a.src.(source.TypedSyncingSource[Request]); ok {
		return s.WaitForSync(ctx)
	}
	return nil
}

func (a afterIndex) String() string { return fmt.Sprint(a.src) }
