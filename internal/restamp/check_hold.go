package restamp

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/confighash/confighash/internal/contract"
)

// minHoldRetry keeps a hold's re-checks from spinning when the quiet time
// is nearly over.
const minHoldRetry = time.Second

// checkFlapGuard asks the flap guard about obj, whose sources now give sum.
// When done is true the reconcile ends with res, f and err: the workload is
// held (its changes are kept for when the hold ends), or its hold ended
// without a re-stamp. Otherwise the caller goes on, re-stamping if stale;
// its patch drops the annotation with the stamp.
func (r *reconciler) checkFlapGuard(ctx context.Context, obj client.Object, req Request, sum string, stale bool) (done bool, res reconcile.Result, f fate, err error) {
	stored := r.holdRecord(ctx, req.KindName, obj)
	v := r.flaps.look(keyOf(req), sum, stale, stored, r.now())
	return r.actOnHold(ctx, obj, req, v, stale)
}

// checkStillHeld is the early check for a stamp that differs from sum,
// before the caller works out whether it is stale (which may cost far more
// than the checksum, check_ignored.go): done is true only when the workload
// is held already and stays held; it never starts a hold. Otherwise the
// caller goes on and asks checkFlapGuard.
func (r *reconciler) checkStillHeld(ctx context.Context, obj client.Object, req Request, sum string) (done bool, res reconcile.Result, f fate, err error) {
	v, held := r.flaps.held(keyOf(req), sum, r.holdRecord(ctx, req.KindName, obj), r.now())
	if !held {
		return false, reconcile.Result{}, forget, nil
	}
	// A differing stamp: counted as a withheld re-stamp, although it might
	// have been kept anyway.
	return r.actOnHold(ctx, obj, req, v, true)
}

// actOnHold carries out the flap guard's decision v on obj.
func (r *reconciler) actOnHold(ctx context.Context, obj client.Object, req Request, v flapDecision, stale bool) (done bool, res reconcile.Result, f fate, err error) {
	logger := log.FromContext(ctx)
	switch {
	case v.Hold != nil:
		if err := r.setHold(ctx, req.KindName, obj, v.Hold); err != nil {
			return true, reconcile.Result{}, keep, err
		}
		if stale {
			r.metrics.held(req.KindName)
		}
		if v.Started {
			r.events.Eventf(obj, nil, corev1.EventTypeWarning, contract.ReasonFlapHold, "Restamp",
				"re-stamped too often; holding until its sources have not changed for %s (backoff level %d)", v.Hold.Quiet, v.Hold.Level)
			logger.Info("flap hold", "quiet", v.Hold.Quiet, "level", v.Hold.Level)
		}
		return true, reconcile.Result{RequeueAfter: max(v.Retry, minHoldRetry)}, keep, nil
	case v.Release && !stale:
		// The sources settled on what the workload was stamped with:
		// nothing to roll, only the hold to drop.
		if err := r.setHold(ctx, req.KindName, obj, nil); err != nil {
			return true, reconcile.Result{}, keep, err
		}
		r.flaps.released(keyOf(req), r.now())
		logger.Info("flap hold ended; stamp already current")
		return true, reconcile.Result{}, forget, nil
	}
	return false, reconcile.Result{}, forget, nil
}
