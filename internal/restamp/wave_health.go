package restamp

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/confighash/confighash/hasher"
	"github.com/confighash/confighash/internal/contract"
	"github.com/confighash/confighash/internal/health"
	"github.com/confighash/confighash/internal/sources"
	"github.com/confighash/confighash/internal/waves"
	"github.com/confighash/confighash/internal/workload"
)

// rolloutOptions are how the hook judges a re-stamped reader's rollout.
type rolloutOptions struct {
	// timeout fails a rollout still going after it (--rollout-timeout; 0:
	// never); soak is how long the new pods must run unharmed
	// (--rollout-soak); poll how often a rollout in flight is judged on top
	// of its workload's status changes, for its pods.
	timeout, soak, poll time.Duration
}

// rolloutPoll is how often the pods of a rollout in flight are looked at:
// a crash loop shows in its pods before it shows, if ever, in the
// workload's status.
const rolloutPoll = 2 * time.Second

// judge is the rollout stage: if req's workload is in flight, is its
// rollout over? A success lets its plans' next waves go; a failure halts
// them. A halt released by hand (contract.HaltReleased) counts as a
// success; a deleted reader holds up nothing. The error is only that of
// writing a halt record, which is retried; pods that cannot be read leave
// the rollout going, under --rollout-timeout.
func (r *reconciler) judge(ctx context.Context, req Request) error {
	id := identity(req)
	kind, ok := r.kinds.get(req.KindName)
	if !ok {
		return nil
	}
	f, inFlight := r.planner.inFlight(id)
	halts, reason := r.planner.haltsBy(id)
	if !inFlight && len(halts) == 0 {
		// Nothing of its to judge or to record: the reconcile that
		// follows reads the workload itself.
		return nil
	}
	obj := kind.New()
	if err := r.client.Get(ctx, req.NamespacedName, obj); err != nil {
		if apierrors.IsNotFound(err) {
			r.planner.deleted(id)
		}
		return nil
	}
	if waves.Released(obj.GetAnnotations()) {
		// Honoured for a halt this leader holds (a new leader counts a
		// released member done as it builds the plan); a leftover one
		// skips no judgement.
		if len(halts) > 0 {
			r.planner.release(id)
			return nil
		}
	}
	if inFlight && (wavesOff(obj) || obj.GetDeletionTimestamp() != nil || workload.IsIdentity(obj)) {
		// Opted out meanwhile, going, or its namespace no longer served
		// (the cache holds its identity only, no status to judge): no
		// wave waits for it, and it halts nothing.
		r.planner.succeededFlight(id, f)
		return nil
	}
	if !inFlight {
		// A halt this leader holds, whose record is missing (its write
		// failed, or a sync removed it): written again.
		if !r.recorded(ctx, req.KindName, obj, halts) {
			return r.writeHalt(ctx, req, obj, contract.Halt{Since: r.now().UTC().Truncate(time.Second), Changes: halts, Reason: reason})
		}
		return nil
	}
	v := r.verdict(ctx, req, kind, obj, f)
	r.planner.looked(id, r.now())
	logger := log.FromContext(ctx)
	switch v.State {
	case health.Succeeded:
		r.planner.succeededFlight(id, f)
		logger.V(1).Info("rolled out", "reason", v.Reason)
	case health.Failed:
		if halted := r.planner.failedFlight(id, v.Reason, f); len(halted) > 0 {
			return r.halt(ctx, req, obj, halted, v)
		}
	}
	return nil
}

// verdict judges obj's rollout in flight f, from its status and its pods.
func (r *reconciler) verdict(ctx context.Context, req Request, kind workload.Kind, obj client.Object, f *flight) health.Verdict {
	stamp := f.stamp
	if stamp == "" {
		// A new leader's flight, rebuilt from the objects: the stamp is
		// the one the template carries.
		if t, ok := kind.PodTemplate(obj); ok {
			stamp = t.Checksum()
		}
	}
	now := r.now()
	v, err := r.judgeWithPods(ctx, req, kind, obj, stamp, f.since, now)
	if err != nil {
		log.FromContext(ctx).Error(err, "judging the rollout; it counts as going")
		v = health.Verdict{State: health.Progressing, Reason: "PodsUnreadable"}
	}
	if v.State == health.Progressing && r.rollouts.timeout > 0 && now.Sub(f.since) > r.rollouts.timeout {
		v = health.Verdict{State: health.Failed, Reason: "RolloutTimeout",
			Message: fmt.Sprintf("not rolled out after --rollout-timeout=%s", r.rollouts.timeout)}
	}
	return v
}

// since is when the flight began: this leader's re-stamp, or the verified
// record a new leader rebuilt it from; never the object's record as it is.
func (r *reconciler) judgeWithPods(ctx context.Context, req Request, kind workload.Kind, obj client.Object, stamp string, since, now time.Time) (health.Verdict, error) {
	var pods []corev1.Pod
	sel, ok, err := health.PodSelector(kind, obj)
	if err != nil {
		return health.Verdict{}, fmt.Errorf("selector of %s: %w", req, err)
	}
	if ok && r.live != nil {
		// Paged and bounded (wave_pods.go).
		if pods, err = podsOfRevision(ctx, r.live, req.Namespace, sel, obj, stamp); err != nil {
			return health.Verdict{}, fmt.Errorf("the pods of %s: %w", req, err)
		}
	}
	return health.Judge(health.Input{Kind: kind, Object: obj, Stamp: stamp, Pods: pods, Now: now, Soak: r.rollouts.soak, Since: since}), nil
}

// recorded reports whether obj's halt record, one the hook sealed for it,
// names every change of cs.
func (r *reconciler) recorded(ctx context.Context, kindName string, obj client.Object, cs []contract.Change) bool {
	h, ok := r.haltRecord(ctx, kindName, obj)
	if !ok {
		return false
	}
	for _, c := range cs {
		if !h.Has(c) {
			return false
		}
	}
	return true
}

// halt says on the failing workload and on each source that its rollout
// for the plans' changes failed, and records the halt on the workload.
func (r *reconciler) halt(ctx context.Context, req Request, obj client.Object, plans []*plan, v health.Verdict) error {
	h := contract.Halt{Since: r.now().UTC().Truncate(time.Second), Reason: v.Reason}
	var names []string
	for _, pl := range plans {
		h.Changes = append(h.Changes, pl.change)
		names = append(names, pl.change.Source)
	}
	r.metrics.halted(req.KindName)
	r.events.Eventf(obj, nil, corev1.EventTypeWarning, contract.ReasonRolloutHalted, "Restamp",
		"rollout for %s failed (%s); the change goes to no other reader until it changes again or %s is set to %q",
		strings.Join(names, ", "), v.Reason, contract.HaltAnnotation, contract.HaltReleased)
	for _, pl := range plans {
		src, err := hasher.ParseSource(pl.change.Source)
		if err != nil {
			continue
		}
		so, err := sources.NewObject(src.Kind)
		if err != nil || r.client.Get(ctx, client.ObjectKey{Namespace: req.Namespace, Name: src.Name}, so) != nil {
			continue
		}
		r.events.Eventf(so, nil, corev1.EventTypeWarning, contract.ReasonRolloutHalted, "Restamp",
			"rollout of this change failed on %s/%s (%s); halted: its other readers keep their stamp until it changes again",
			strings.ToLower(req.KindName), req.Name, v.Reason)
	}
	log.FromContext(ctx).Info("change halted", "sources", names, "reason", v.Reason)
	return r.writeHalt(ctx, req, obj, h)
}

// writeHalt records h on obj, keeping the halted changes of other sources
// its earlier record (sealed for it) names.
func (r *reconciler) writeHalt(ctx context.Context, req Request, obj client.Object, h contract.Halt) error {
	if old, ok := r.haltRecord(ctx, req.KindName, obj); ok {
		for _, c := range old.Changes {
			if !slices.ContainsFunc(h.Changes, func(n contract.Change) bool { return n.Source == c.Source }) {
				h.Changes = append(h.Changes, c)
			}
		}
	}
	base := client.MergeFrom(obj.DeepCopyObject().(client.Object))
	a := obj.GetAnnotations()
	if a == nil {
		a = map[string]string{}
	}
	a[contract.HaltAnnotation] = r.sealHalt(req.KindName, obj, h)
	obj.SetAnnotations(a)
	if err := r.client.Patch(ctx, obj, base, client.FieldOwner(contract.FieldManager)); err != nil {
		return fmt.Errorf("recording the halt on %s: %w", req, err)
	}
	return nil
}
