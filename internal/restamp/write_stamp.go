package restamp

import (
	"context"
	"fmt"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/confighash/confighash/internal/contract"
	"github.com/confighash/confighash/internal/workload"
)

// patch writes only the stamp, and with waves the record of the re-stamp
// (rec, on the workload's own metadata, sealed for obj, a kindName; nil:
// none). The optimistic lock
// makes a concurrent template change fail the patch instead of being
// overwritten; the error requeues us and the next try starts from the new
// object.
func (r *reconciler) patch(ctx context.Context, kindName string, obj client.Object, t workload.Template, sum string, rec *contract.Rollout) error {
	base := client.MergeFromWithOptions(obj.DeepCopyObject().(client.Object), client.MergeFromWithOptimisticLock{})
	t.SetChecksum(sum)
	// Only a change since the undo, or a release, re-stamps a rolled-back
	// workload (checkRolledBack): it goes forward, and its halt with it.
	if h := r.haltOf(ctx, kindName, obj); h.IsRollback() {
		a := obj.GetAnnotations()
		delete(a, contract.HaltAnnotation)
		obj.SetAnnotations(a)
	}
	if rec != nil {
		a := obj.GetAnnotations()
		if a == nil {
			a = map[string]string{}
		}
		r.liftHalts(ctx, kindName, obj, a, rec.Read)
		r.sealRollout(kindName, obj, a, *rec)
		obj.SetAnnotations(a)
	}
	// The re-stamp that ends a flap hold ends it on the workload too, in
	// the same write.
	dropHold(obj)
	err := r.client.Patch(ctx, obj, base, client.FieldOwner(contract.FieldManager))
	if apierrors.IsConflict(err) {
		return fmt.Errorf("workload changed while re-stamping, retrying: %w", err)
	}
	if err != nil {
		return fmt.Errorf("patching stamp: %w", err)
	}
	return nil
}

// liftHalts drops from obj's halt record, in a (obj's annotations, about
// to be written), the changes whose source now reads other content than
// the halted one (read): the workload goes to that new content. A halted
// change of a source that has not changed stays, and the record goes only
// when none is left. A value that holds nothing back (not the hook's for
// obj, unreadable, too long, dated ahead, or "released") goes with the
// re-stamp: what is left is only ever the hook's own halt, sealed again.
func (r *reconciler) liftHalts(ctx context.Context, kindName string, obj client.Object, a map[string]string, read []contract.Change) {
	if _, ok := a[contract.HaltAnnotation]; !ok {
		return
	}
	// A value that holds nothing back reads as a halt of no change.
	h, _ := r.haltRecord(ctx, kindName, obj)
	h.Changes = slices.DeleteFunc(h.Changes, func(c contract.Change) bool { return !slices.Contains(read, c) })
	if len(h.Changes) == 0 {
		delete(a, contract.HaltAnnotation)
		return
	}
	a[contract.HaltAnnotation] = r.sealHalt(kindName, obj, h)
}
