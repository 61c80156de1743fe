package restamp

import (
	"context"
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/confighash/confighash/internal/contract"
)

// setHold makes obj (a kindName) carry h, sealed for it, in
// contract.HoldAnnotation, or not carry it when h is nil, and writes only
// when that changes something. The write is a merge
// patch of that one key of the workload's own metadata, under the hook's
// field manager: the pod template is untouched, so nothing rolls, and the
// webhook keeps the stored stamp. Written by hand rather than diffed from
// the cached object, so that dropping the last annotation cannot turn into
// "annotations": null and take someone else's new annotation with it; and
// since it names one key only, it needs no optimistic lock.
func (r *reconciler) setHold(ctx context.Context, kindName string, obj client.Object, h *contract.Hold) error {
	cur, has := obj.GetAnnotations()[contract.HoldAnnotation]
	var value any // JSON null removes the key
	if h != nil {
		value = r.sealHold(kindName, obj, *h)
	}
	if (h == nil && !has) || (h != nil && has && cur == value) {
		return nil
	}
	body, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]any{contract.HoldAnnotation: value}}})
	if err != nil {
		return fmt.Errorf("encoding %s: %w", contract.HoldAnnotation, err)
	}
	if err := r.client.Patch(ctx, obj, client.RawPatch(types.MergePatchType, body), client.FieldOwner(contract.FieldManager)); err != nil {
		return fmt.Errorf("writing %s: %w", contract.HoldAnnotation, err)
	}
	return nil
}

// dropHold removes contract.HoldAnnotation from obj in memory, so that the patch
// that re-stamps a workload at the end of its hold also ends the hold.
func dropHold(obj client.Object) {
	a := obj.GetAnnotations()
	if _, ok := a[contract.HoldAnnotation]; !ok {
		return
	}
	delete(a, contract.HoldAnnotation)
	obj.SetAnnotations(a)
}
