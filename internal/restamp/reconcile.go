package restamp

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"golang.org/x/time/rate"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/confighash/confighash/hasher"
	"github.com/confighash/confighash/internal/contract"
	"github.com/confighash/confighash/internal/injection"
	"github.com/confighash/confighash/internal/rollout"
	"github.com/confighash/confighash/internal/sources"
	"github.com/confighash/confighash/internal/workload"
)

// reconciler re-checks one workload's stamp.
type reconciler struct {
	client client.Client // cached reads, live writes
	// readers lists the readers of a source through the field index: the
	// manager's cache itself, which also holds the unstructured kinds that
	// client reads live (and so without the index).
	readers client.Reader
	live    client.Reader // confirms a re-check before it writes; nil: unconfirmed
	maxKeys int           // the key bound of live reads (sources.Reader.MaxKeys)
	key     []byte
	kinds   *watched
	budget  *rate.Limiter
	flaps   *flapGuard
	changes *changes
	toggles *toggles
	events  events.EventRecorder
	metrics *Metrics
	now     func() time.Time
	policy  injection.Policy
	// planner runs the waves (wave_plan.go); nil with --max-wave-size 0,
	// which re-stamps every reader at once.
	planner  *planner
	rollouts rolloutOptions
	// written holds the re-stamps whose write the cache has not shown yet
	// (write_expect.go); nil: none are tracked.
	written *expectations
	// recordWarns reports each record that cannot be used once
	// (records.go).
	recordWarns recordWarnings
}

// Reconcile takes req's pending changes, once, and puts them back only when
// reconcile says it is to run again for them (see changes): no way out of
// reconcile can leave an entry behind. A reconcile that panics (which
// controller-runtime recovers and retries) keeps them, as an error would.
func (r *reconciler) Reconcile(ctx context.Context, req Request) (res reconcile.Result, err error) {
	p := r.changes.take(req)
	f := keep
	defer func() {
		if f == keep {
			r.changes.putBack(req, p)
		}
	}()
	var judged error
	if r.planner != nil {
		judged = r.judge(ctx, req)
	}
	res, f, err = r.reconcile(ctx, req, p)
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

// reconcile re-checks req's stamp; p is what its changes recorded. Each way
// out says what becomes of p: forget it, or keep it for a retry.
func (r *reconciler) reconcile(ctx context.Context, req Request, p pending) (reconcile.Result, fate, error) {
	logger := log.FromContext(ctx).WithValues("workload", req.String())
	ctx = log.IntoContext(ctx, logger)
	kind, ok := r.kinds.get(req.KindName)
	if !ok {
		// Requests come only from the kinds Setup watches; another kind is
		// a bug, and retrying it would not help.
		return reconcile.Result{}, forget, reconcile.TerminalError(fmt.Errorf("no workload kind %q", req.KindName))
	}
	obj := kind.New()
	if err := r.client.Get(ctx, req.NamespacedName, obj); err != nil {
		if apierrors.IsNotFound(err) {
			r.planner.settled(identity(req))
		}
		return reconcile.Result{}, forget, client.IgnoreNotFound(err)
	}
	if r.written.lagging(identity(req), obj.GetResourceVersion()) {
		// The copy our own re-stamp replaced: decide again once the cache
		// has the write. Its changes are kept for that run.
		logger.V(1).Info("cache behind our own re-stamp; looking again shortly")
		return reconcile.Result{RequeueAfter: cacheLagRetry}, keep, nil
	}
	// The same policy as the webhook's: readers in a namespace confighash
	// does not serve (a labelled kube-system, say) are never re-stamped.
	ns, err := r.policy.Check(ctx, r.client, req.Namespace)
	if err != nil {
		return reconcile.Result{}, forget, err
	}
	if !ns.Serves || obj.GetDeletionTimestamp() != nil {
		r.planner.settled(identity(req))
		return reconcile.Result{}, forget, nil
	}
	reads := workload.ReadsOf(kind, obj)
	if reads.Skip != workload.NotSkipped {
		r.planner.settled(identity(req))
		// Opted out; a Rollout reading a Deployment's template, or a custom
		// object without one: nothing here to stamp; or over the sources
		// limit: the webhook leaves such a template unstamped, and
		// re-stamping it here would roll what admission refused to touch.
		return reconcile.Result{}, forget, nil
	}
	t, refs := reads.Template, reads.Refs
	current := t.Checksum()
	if current == "" && req.Recheck {
		// Left alone until its config changes: it holds up no wave.
		r.planner.settledRecheck(req)
		return reconcile.Result{}, forget, nil
	}
	r.metrics.checksum()
	lookup := sources.Reader{Cache: r.client}.Lookup(ctx, req.Namespace)
	res, err := hasher.Checksum(r.key, req.Namespace, refs, lookup)
	if notHeld := (*sources.NotHeldError)(nil); errors.As(err, &notHeld) && notHeld.Reason == sources.TooManyKeys {
		// The webhook does not stamp such a reader either; until the
		// source shrinks (its update event brings us back), keep the stamp.
		r.events.Eventf(obj, nil, corev1.EventTypeWarning, contract.ReasonSourceTooLarge, "Restamp",
			"%s has more keys than the limit of --max-source-keys; not rolling", notHeld.Source)
		r.planner.settled(identity(req))
		return reconcile.Result{}, forget, nil
	}
	if err != nil {
		// A source not held yet (its namespace became served a moment
		// ago) is retried with backoff, once the fill has read it.
		return reconcile.Result{}, keep, fmt.Errorf("computing checksum: %w", err)
	}
	if len(res.Missing) > 0 {
		// Rolling now would start pods that cannot find their config. Keep
		// the stamp; when the source returns, its create event brings us back.
		r.metrics.missing(req.KindName)
		r.events.Eventf(obj, nil, corev1.EventTypeWarning, contract.ReasonSourceMissing, "Restamp",
			"required %s missing; not rolling until it exists", joinSources(res.Missing))
		r.planner.settled(identity(req))
		return reconcile.Result{}, forget, nil
	}
	// A held workload is not re-stamped whatever its stamp: the guard is
	// asked before the costlier question of why a stamp differs.
	// A held reader holds up no wave (settled): it takes the content
	// when its hold ends, by itself.
	if current != res.Checksum {
		if done, result, f, err := r.checkStillHeld(ctx, obj, req, res.Checksum); done {
			r.planner.settled(identity(req))
			return result, f, err
		}
	}
	stale, err := r.stale(ctx, obj, req, p.before, refs, lookup, current, res.Checksum)
	if err != nil {
		return reconcile.Result{}, keep, err
	}
	// Asked even when the stamp is current: a held workload's sources may
	// flap back to it, and the hold still has to run its course and end.
	if done, result, f, err := r.checkFlapGuard(ctx, obj, req, res.Checksum, stale); done {
		r.planner.settled(identity(req))
		return result, f, err
	}
	if !stale {
		// Nothing to re-stamp. If it waited in a wave and its stamp went
		// to the new content without the hook (the webhook stamped a
		// template change), its rollout is judged as if the hook had
		// written it; else (a stamp kept on purpose: another key, an
		// ignore toggle) it waits no more.
		if current != res.Checksum || !r.planner.adopt(identity(req), current, r.now()) {
			r.planner.settled(identity(req))
		}
		return reconcile.Result{}, forget, nil
	}

	// Whether its previous re-stamp's rollout was still going: the flap
	// guard counts only such re-stamps, or content that came back.
	_, wasRolling := r.planner.inFlight(identity(req))
	admitted, fl, result, rec, err := r.gate(ctx, req, obj, refs, lookup, res.Checksum, p.withSources(r.changes.since(req)).names())
	if err != nil || !admitted {
		// Waiting for its wave, the bound or a halt: the changes are kept
		// for the re-stamp that comes when it may go.
		return result, keep, err
	}
	if err := r.budget.Wait(ctx); err != nil {
		r.planner.abort(identity(req), fl)
		return reconcile.Result{}, keep, fmt.Errorf("waiting for write budget: %w", err)
	}
	confirmed, err := r.confirmLive(ctx, req, refs, res.Checksum)
	if err != nil || !confirmed {
		r.planner.abort(identity(req), fl)
		if err != nil {
			return reconcile.Result{}, keep, err
		}
		return reconcile.Result{}, forget, nil
	}
	from := obj.GetResourceVersion()
	if err := r.patch(ctx, req.KindName, obj, t, res.Checksum, rec); err != nil {
		r.planner.abort(identity(req), fl)
		return reconcile.Result{}, keep, err
	}
	r.written.wrote(identity(req), from)
	r.planner.written(fl)
	why, nothingToRun := rollout.NothingToRun(kind, obj)
	// The flap guard counts a re-stamp that went through no wave, or whose
	// rollout there is nothing to wait for, as it did before waves; one in
	// waves only while its previous rollout was still going.
	r.flaps.restampedTo(keyOf(req), r.now(), res.Checksum, fl == nil || nothingToRun || wasRolling)
	if fl != nil && nothingToRun {
		// It starts no pod, so it can break nothing: its wave need not
		// wait for its controller (rollout.NothingToRun).
		logger.V(1).Info("nothing to roll out", "reason", why)
		r.planner.succeededFlight(identity(req), fl)
	}
	reason := restampChanged
	if current == "" {
		reason = restampFirstStamp
	}
	if req.Recheck {
		reason = restampRecheck
	}
	r.metrics.restamped(req.KindName, req.Namespace, reason)
	changed := p.withSources(r.changes.since(req)).names()
	r.events.Eventf(obj, nil, corev1.EventTypeNormal, contract.ReasonConfigChanged, "Restamp",
		"config changed (%s); re-stamped pod template", strings.Join(changed, ", "))
	logger.Info("re-stamped", "sources", changed, "reason", reason, "from", current, "to", res.Checksum)
	return reconcile.Result{}, forget, nil
}

func joinSources(s []hasher.Source) string {
	names := make([]string, len(s))
	for i, src := range s {
		names[i] = src.String()
	}
	return strings.Join(names, ", ")
}
