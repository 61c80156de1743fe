package restamp

import (
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// outcome is the one answer of a reconcile, whichever stage ended it: what
// becomes of the request (the result, the fate of its pending changes, the
// error) and what the waves learn of the reader (news). Reconcile acts on
// it once: it tells the planner (tellWaves), keeps or forgets the changes,
// and sets the requeue (requeue).
type outcome struct {
	res  reconcile.Result
	fate fate
	err  error
	news waveNews
	// flight is the flight the wave gate admitted the re-stamp in (nil:
	// none, or no waves), for newsAborted and newsWritten.
	flight *flight
	// stamp is the reader's stamp: for newsCurrent, set when it is the
	// fresh one, which the webhook may have written mid-waves; for
	// newsWritten and newsWrittenIdle, the one written.
	stamp string
}

// waveNews is what a reconcile tells the waves of its reader.
type waveNews int

const (
	// newsNone: nothing (it waits for its wave, the bound or a halt, or
	// the reconcile is to run again: an error, the cache behind).
	newsNone waveNews = iota
	// newsSettled: it needs no re-stamp (gone, deleting, not served,
	// opted out, held, a source missing or too large): it holds up no
	// wave.
	newsSettled
	// newsUnstampedRecheck: a re-check left it alone, unstamped; settled
	// unless a live change of it waits in a wave.
	newsUnstampedRecheck
	// newsCurrent: its stamp is current. Adopted, when the stamp went to
	// the new content mid-waves, so that its rollout is judged; else
	// settled.
	newsCurrent
	// newsAborted: admitted, but not written.
	newsAborted
	// newsWritten: re-stamped.
	newsWritten
	// newsWrittenIdle: re-stamped, and it starts no pod
	// (health.NothingToRun): its rollout has succeeded already.
	newsWrittenIdle
	// newsWindow: it waits for its rollout window or a freeze, which no
	// slot of the bound can end: it is no slot waiter.
	newsWindow
)

// ended is an outcome that tells the waves nothing.
func ended(res reconcile.Result, f fate, err error) outcome {
	return outcome{res: res, fate: f, err: err, news: newsNone}
}

// settledOutcome is an outcome whose reader needs no re-stamp.
func settledOutcome(res reconcile.Result, f fate, err error) outcome {
	return outcome{res: res, fate: f, err: err, news: newsSettled}
}

// tellWaves tells the planner what o says of req's reader.
func (r *reconciler) tellWaves(req Request, o outcome) {
	id := identity(req)
	switch o.news {
	case newsNone:
	case newsSettled:
		r.planner.settled(id)
	case newsUnstampedRecheck:
		r.planner.settledRecheck(req)
	case newsCurrent:
		if o.stamp == "" || !r.planner.adopt(id, o.stamp, r.now()) {
			r.planner.settled(id)
		}
	case newsAborted:
		r.planner.abort(id, o.flight)
	case newsWritten:
		r.planner.written(id, o.flight, o.stamp)
	case newsWindow:
		r.planner.waitsForWindow(id)
	case newsWrittenIdle:
		r.planner.written(id, o.flight, o.stamp)
		r.planner.succeededFlight(id, o.flight)
	}
}

// requeue is the result Reconcile returns for o, judged being the health
// judge's error (judge).
func (r *reconciler) requeue(req Request, o outcome, judged error) (reconcile.Result, error) {
	res, err := o.res, o.err
	if _, ok := r.planner.inFlight(identity(req)); ok && err == nil && (res.RequeueAfter == 0 || res.RequeueAfter > r.rollouts.poll) {
		// Its rollout is judged again on each status change of the
		// workload, and at least this often, for its pods.
		res.RequeueAfter = r.rollouts.poll
	}
	r.metrics.inFlight(r.planner)
	if err == nil && judged != nil {
		// A halt record not written yet: retried with backoff.
		return reconcile.Result{}, judged
	}
	return res, err
}
