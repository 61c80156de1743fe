package restamp

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/confighash/confighash/internal/contract"
	"github.com/confighash/confighash/internal/workload"
)

// patch writes only the stamp, and with waves the record of the re-stamp
// (rec, on the workload's own metadata; nil: none). The optimistic lock
// makes a concurrent template change fail the patch instead of being
// overwritten; the error requeues us and the next try starts from the new
// object.
func (r *reconciler) patch(ctx context.Context, obj client.Object, t workload.Template, sum string, rec *contract.Rollout) error {
	base := client.MergeFromWithOptions(obj.DeepCopyObject().(client.Object), client.MergeFromWithOptimisticLock{})
	t.SetChecksum(sum)
	if rec != nil {
		// A re-stamp ends any halt of the workload's earlier changes: it
		// goes to new content.
		a := obj.GetAnnotations()
		if a == nil {
			a = map[string]string{}
		}
		a[contract.RolloutAnnotation] = rec.String()
		delete(a, contract.HaltAnnotation)
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
