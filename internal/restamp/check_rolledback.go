package restamp

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/confighash/confighash/hasher"
	"github.com/confighash/confighash/internal/contract"
)

// checkRolledBack reports whether obj, whose stamp differs from what its
// sources give now, is a rolled-back workload to leave where it is. The
// webhook records the rollback (waves.RolledBack, sealed for obj in the
// same write as the undo, so nothing can race it): the workload was put
// back on one of its live revisions, whose pods read that revision's
// snapshots. Rolling it forward would undo the undo, so it stays until one
// of its sources changes (the halt then names older content, and the
// re-stamp drops it) or the halt is released. Its change's plan, if this
// leader runs one, is halted by it as a new leader's would be from the
// record. On a re-check (the undo's own template write, a restart's
// replay) a RolledBack warning says so.
func (r *reconciler) checkRolledBack(ctx context.Context, obj client.Object, req Request, refs []hasher.Reference, lookup hasher.Lookup) bool {
	h := r.haltOf(ctx, req.KindName, obj)
	if !h.IsRollback() {
		return false
	}
	ids, err := r.contentIDs(req.Namespace, refs, lookup)
	if err != nil || !h.KeepsBack(ids) {
		// A source changed since the undo (the fix), or cannot be told:
		// the workload goes on as any stale reader, and its re-stamp
		// drops the halt (liftHalts).
		return false
	}
	r.planner.rolledBack(identity(req), h.Record.Changes)
	if req.Recheck {
		names := make([]string, len(h.Record.Changes))
		for i, c := range h.Record.Changes {
			names[i] = c.Source
		}
		r.events.Eventf(obj, nil, corev1.EventTypeWarning, contract.ReasonRolledBack, "Restamp",
			"rolled back to an earlier revision, whose pods read its pinned config; not rolled forward to the current content of %s until one of them changes or %s is set to %q",
			strings.Join(names, ", "), contract.HaltAnnotation, contract.HaltReleased)
		log.FromContext(ctx).Info("rolled back; keeping its stamp", "sources", names)
	}
	return true
}

// clearRolledBack drops the rollback's halt of obj, whose stamp is what its
// sources give now: it was put forward again by hand (an undo of the undo,
// an edit) or its content went back to the revision's. Nothing is held back
// any more, so the halt goes, and with it the halt of its change's plan.
func (r *reconciler) clearRolledBack(ctx context.Context, obj client.Object, req Request) error {
	if h := r.haltOf(ctx, req.KindName, obj); !h.IsRollback() {
		return nil
	}
	base := client.MergeFromWithOptions(obj.DeepCopyObject().(client.Object), client.MergeFromWithOptimisticLock{})
	a := obj.GetAnnotations()
	delete(a, contract.HaltAnnotation)
	obj.SetAnnotations(a)
	if err := r.client.Patch(ctx, obj, base, client.FieldOwner(contract.FieldManager)); err != nil {
		return fmt.Errorf("removing the halt of a rollback undone: %w", err)
	}
	r.planner.release(identity(req))
	log.FromContext(ctx).Info("current again; dropped the rollback's halt")
	return nil
}
