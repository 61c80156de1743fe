package restamp

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/confighash/confighash/internal/contract"
)

// settler puts the trailing coalescing window in front of the reconciler.
// The queue cannot push an item's due time later, so each change adds the
// workload after its window and settler sends it back until the window
// that the latest change moved has ended. It is a wrapper, not part of
// reconciler, so that what waits and what re-stamps stay apart.
type settler struct {
	next    reconcile.TypedReconciler[Request]
	changes *changes
	// cache reads the workload for its annotation; kinds builds its object.
	cache client.Reader
	kinds *watched
	// window and coalesceMax are the defaults the annotation is checked against.
	window, coalesceMax time.Duration
	events              events.EventRecorder
	now                 func() time.Time
}

func (s *settler) Reconcile(ctx context.Context, req Request) (reconcile.Result, error) {
	due, pending := s.changes.dueAt(req)
	if !pending {
		return s.next.Reconcile(ctx, req)
	}
	if wait := due.Sub(s.now()); wait > 0 {
		return reconcile.Result{RequeueAfter: wait}, nil
	}
	s.reportWindow(ctx, req)
	return s.next.Reconcile(ctx, req)
}

// reportWindow warns, once per settled burst, on a workload whose window
// annotation was not usable as written; the enqueuer has already fallen
// back to the default or the cap.
func (s *settler) reportWindow(ctx context.Context, req Request) {
	k, ok := s.kinds.get(req.KindName)
	if !ok || req.Recheck {
		return
	}
	obj := k.New()
	if err := s.cache.Get(ctx, req.NamespacedName, obj); err != nil {
		return
	}
	if _, err := windowOf(obj.GetAnnotations(), s.window, s.coalesceMax); err != nil {
		s.events.Eventf(obj, nil, corev1.EventTypeWarning, contract.ReasonInvalidAnnotation, "Restamp", "%s", err.Error())
	}
}
