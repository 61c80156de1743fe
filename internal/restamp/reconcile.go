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
	"github.com/confighash/confighash/internal/sources"
	"github.com/confighash/confighash/internal/window"
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
	// planner runs the waves (wave_planner.go); nil with --max-wave-size 0,
	// which re-stamps every reader at once.
	planner  *planner
	rollouts rolloutOptions
	// written holds the re-stamps whose write the cache has not shown yet
	// (write_expect.go); nil: none are tracked.
	written *expectations
	// recordWarns reports each record that cannot be used once
	// (records.go).
	recordWarns recordWarnings
	// windows are the cluster's window and freezes (--rollout-window,
	// --freeze); waits, the readers waiting for them (wave_window.go).
	windows window.Cluster
	waits   *windowWaits
}

// Reconcile runs the hook's stages for req, in this order (doc.go's map):
// the health judge (judge, wave_health.go) on its rollout in flight, if
// any; then reconcile: the read and the checks, the wave gate (gate,
// wave_gate.go) and the stamp writer (writeStamp, write_restamp.go), which
// end in one outcome. From that outcome alone the waves are told
// (tellWaves) and the requeue set (requeue, reconcile_outcome.go).
//
// It takes req's pending changes, once, and puts them back only when the
// outcome says the reconcile is to run again for them (see changes): no way
// out can leave an entry behind. A reconcile that panics (which
// controller-runtime recovers and retries) keeps them, as an error would.
func (r *reconciler) Reconcile(ctx context.Context, req Request) (reconcile.Result, error) {
	p := r.changes.take(req)
	o := outcome{fate: keep}
	defer func() {
		if o.fate == keep {
			r.changes.putBack(req, p)
		}
	}()
	judged := r.judge(ctx, req)
	o = r.reconcile(ctx, req, p)
	r.tellWaves(req, o)
	if o.news != newsNone && o.news != newsAborted && o.news != newsWindow {
		// The change is behind it: re-stamped, current, or nothing to do.
		r.waits.done(identity(req))
	}
	return r.requeue(req, o, judged)
}

// reconcile re-checks req's stamp; p is what its changes recorded. Each way
// out is an outcome: what becomes of p (forget it, or keep it for a retry)
// and what the waves learn.
func (r *reconciler) reconcile(ctx context.Context, req Request, p pending) outcome {
	logger := log.FromContext(ctx).WithValues("workload", req.String())
	ctx = log.IntoContext(ctx, logger)
	kind, ok := r.kinds.get(req.KindName)
	if !ok {
		// Requests come only from the kinds Setup watches; another kind is
		// a bug, and retrying it would not help.
		return ended(reconcile.Result{}, forget, reconcile.TerminalError(fmt.Errorf("no workload kind %q", req.KindName)))
	}
	obj := kind.New()
	if err := r.client.Get(ctx, req.NamespacedName, obj); err != nil {
		if apierrors.IsNotFound(err) {
			return settledOutcome(reconcile.Result{}, forget, nil)
		}
		return ended(reconcile.Result{}, forget, err)
	}
	if r.written.lagging(identity(req), obj.GetResourceVersion()) {
		// The copy our own re-stamp replaced: decide again once the cache
		// has the write. Its changes are kept for that run.
		logger.V(1).Info("cache behind our own re-stamp; looking again shortly")
		return ended(reconcile.Result{RequeueAfter: cacheLagRetry}, keep, nil)
	}
	// The same policy as the webhook's: readers in a namespace confighash
	// does not serve (a labelled kube-system, say) are never re-stamped.
	served, ns, err := r.policy.CheckNamespace(ctx, r.client, req.Namespace)
	if err != nil {
		return ended(reconcile.Result{}, forget, err)
	}
	if !served.Serves || ns == nil || obj.GetDeletionTimestamp() != nil {
		return settledOutcome(reconcile.Result{}, forget, nil)
	}
	reads := workload.ReadsOf(kind, obj)
	if reads.Skip != workload.NotSkipped {
		// Opted out; a Rollout reading a Deployment's template, or a custom
		// object without one: nothing here to stamp; or over the sources
		// limit: the webhook leaves such a template unstamped, and
		// re-stamping it here would roll what admission refused to touch.
		return settledOutcome(reconcile.Result{}, forget, nil)
	}
	t, refs := reads.Template, reads.Refs
	current := t.Checksum()
	if current == "" && req.Recheck {
		// Left alone until its config changes: it holds up no wave.
		return outcome{fate: forget, news: newsUnstampedRecheck}
	}
	r.metrics.checksum()
	lookup := sources.Reader{Cache: r.client}.Lookup(ctx, req.Namespace)
	res, err := hasher.Checksum(r.key, req.Namespace, refs, lookup)
	if notHeld := (*sources.NotHeldError)(nil); errors.As(err, &notHeld) && notHeld.Reason == sources.TooManyKeys {
		// The webhook does not stamp such a reader either; until the
		// source shrinks (its update event brings us back), keep the stamp.
		r.events.Eventf(obj, nil, corev1.EventTypeWarning, contract.ReasonSourceTooLarge, "Restamp",
			"%s has more keys than the limit of --max-source-keys; not rolling", notHeld.Source)
		return settledOutcome(reconcile.Result{}, forget, nil)
	}
	if err != nil {
		// A source not held yet (its namespace became served a moment
		// ago) is retried with backoff, once the fill has read it.
		return ended(reconcile.Result{}, keep, fmt.Errorf("computing checksum: %w", err))
	}
	if len(res.Missing) > 0 {
		// Rolling now would start pods that cannot find their config. Keep
		// the stamp; when the source returns, its create event brings us back.
		r.metrics.missing(req.KindName)
		r.events.Eventf(obj, nil, corev1.EventTypeWarning, contract.ReasonSourceMissing, "Restamp",
			"required %s missing; not rolling until it exists", joinSources(res.Missing))
		return settledOutcome(reconcile.Result{}, forget, nil)
	}
	// A held workload is not re-stamped whatever its stamp: the guard is
	// asked before the costlier question of why a stamp differs.
	// A held reader holds up no wave (settled): it takes the content
	// when its hold ends, by itself.
	if current != res.Checksum && r.checkRolledBack(ctx, obj, req, refs, lookup) {
		return settledOutcome(reconcile.Result{}, forget, nil)
	}
	if current == res.Checksum {
		if err := r.clearRolledBack(ctx, obj, req); err != nil {
			return ended(reconcile.Result{}, keep, err)
		}
	}
	if current != res.Checksum {
		if done, result, f, err := r.checkStillHeld(ctx, obj, req, res.Checksum); done {
			return settledOutcome(result, f, err)
		}
	}
	stale, err := r.stale(ctx, obj, req, p.before, refs, lookup, current, res.Checksum)
	if err != nil {
		return ended(reconcile.Result{}, keep, err)
	}
	// Asked even when the stamp is current: a held workload's sources may
	// flap back to it, and the hold still has to run its course and end.
	if done, result, f, err := r.checkFlapGuard(ctx, obj, req, res.Checksum, stale); done {
		return settledOutcome(result, f, err)
	}
	if !stale {
		// Nothing to re-stamp. If it waited in a wave and its stamp went
		// to the new content without the hook (the webhook stamped a
		// template change), its rollout is judged as if the hook had
		// written it; else (a stamp kept on purpose: another key, an
		// ignore toggle) it waits no more.
		o := outcome{fate: forget, news: newsCurrent}
		if current == res.Checksum {
			o.stamp = current
		}
		return o
	}
	return r.restamp(ctx, staleReader{req: req, kind: kind, obj: obj, template: t, refs: refs, lookup: lookup, current: current, fresh: res.Checksum, p: p,
		namespace: ns.Annotations})
}

func joinSources(s []hasher.Source) string {
	names := make([]string, len(s))
	for i, src := range s {
		names[i] = src.String()
	}
	return strings.Join(names, ", ")
}
