package status

import (
	"context"
	"errors"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/confighash/confighash/internal/kindcheck"
	"github.com/confighash/confighash/internal/workload"
)

// KindChecker is the check the hook makes before it watches a custom kind
// (kindcheck.Checker is one): whether the apiserver serves it, and a
// *kindcheck.PathError when its template path leads nowhere in the schema
// the apiserver publishes. The hook refuses to watch such a kind: its
// objects are stamped on create and update, but never re-stamped. It reads
// only discovery and /openapi/v3, which every authenticated client may.
type KindChecker interface {
	Served(ctx context.Context, k workload.Kind) (bool, error)
}

// kindChecks says, by kind, why the hook does not watch it (refused), or
// why that could not be told (unchecked).
type kindChecks struct {
	refused, unchecked map[schema.GroupVersionKind]string
}

// checkKinds runs c once for each unstructured kind among objs (as listWorkloads
// returns them, carrying their GroupVersionKind). A nil c checks nothing.
func checkKinds(ctx context.Context, c KindChecker, reg workload.Registry, objs []client.Object) kindChecks {
	v := kindChecks{refused: map[schema.GroupVersionKind]string{}, unchecked: map[schema.GroupVersionKind]string{}}
	if c == nil {
		return v
	}
	done := map[schema.GroupVersionKind]bool{}
	for _, obj := range objs {
		gvk := obj.GetObjectKind().GroupVersionKind()
		k, ok := reg.Of(gvk)
		if done[gvk] || !ok || !k.Unstructured() {
			continue
		}
		done[gvk] = true
		_, err := c.Served(ctx, k)
		var pe *kindcheck.PathError
		switch {
		case errors.As(err, &pe):
			v.refused[gvk] = err.Error()
		case err != nil:
			v.unchecked[gvk] = "cannot tell whether the hook watches " + k.Name() + ": " + err.Error()
		}
	}
	return v
}

// fill records in w what the check found about its kind.
func (v kindChecks) fill(w *Workload, gvk schema.GroupVersionKind) {
	w.NotWatched = v.refused[gvk]
	if msg := v.unchecked[gvk]; msg != "" {
		w.Warnings = append(w.Warnings, msg)
	}
}
