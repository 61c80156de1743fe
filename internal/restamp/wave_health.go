package restamp

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/confighash/confighash/hasher"
	"github.com/confighash/confighash/internal/contract"
	"github.com/confighash/confighash/internal/rollout"
	"github.com/confighash/confighash/internal/sources"
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
// them. A halt released by hand (contract.HaltReleased) counts as a success.
func (r *reconciler) judge(ctx context.Context, req Request) error {
	id := identity(req)
	kind, ok := r.kinds.get(req.KindName)
	if !ok {
		return nil
	}
	f, inFlight := r.planner.inFlight(id)
	obj := kind.New()
	if err := r.client.Get(ctx, req.NamespacedName, obj); err != nil {
		if apierrors.IsNotFound(err) && inFlight {
			// A deleted reader holds up no wave.
			r.planner.succeeded(id)
		}
		return client.IgnoreNotFound(err)
	}
	if obj.GetAnnotations()[contract.HaltAnnotation] == contract.HaltReleased {
		r.planner.release(id)
		return nil
	}
	if !inFlight {
		return nil
	}
	stamp := f.stamp
	if stamp == "" {
		// A new leader's flight, rebuilt from the objects: the stamp is
		// the one the template carries.
		if t, ok := kind.PodTemplate(obj); ok {
			stamp = t.Checksum()
		}
	}
	var pods []corev1.Pod
	sel, ok, err := rollout.PodSelector(kind, obj)
	if err != nil {
		return fmt.Errorf("selector of %s: %w", req, err)
	}
	if ok && r.live != nil {
		var list corev1.PodList
		if err := r.live.List(ctx, &list, client.InNamespace(req.Namespace), client.MatchingLabelsSelector{Selector: sel}); err != nil {
			return fmt.Errorf("listing the pods of %s: %w", req, err)
		}
		pods = rollout.Owned(obj, list.Items)
	}
	now := r.now()
	v := rollout.Judge(rollout.Input{Kind: kind, Object: obj, Stamp: stamp, Pods: pods, Now: now, Soak: r.rollouts.soak})
	if v.State == rollout.Progressing && r.rollouts.timeout > 0 && now.Sub(f.since) > r.rollouts.timeout {
		v = rollout.Verdict{State: rollout.Failed, Reason: "RolloutTimeout",
			Message: fmt.Sprintf("not rolled out after --rollout-timeout=%s", r.rollouts.timeout)}
	}
	logger := log.FromContext(ctx)
	switch v.State {
	case rollout.Succeeded:
		r.planner.succeeded(id)
		logger.V(1).Info("rolled out", "workload", req.String(), "reason", v.Reason)
	case rollout.Failed:
		halted := r.planner.failed(id, v.Reason)
		if len(halted) > 0 {
			return r.halt(ctx, req, obj, halted, v, now)
		}
	}
	r.metrics.inFlight(r.planner)
	return nil
}

// halt records on the failing workload that its rollout for the plans'
// changes failed, and says so on it and on each source.
func (r *reconciler) halt(ctx context.Context, req Request, obj client.Object, plans []*plan, v rollout.Verdict, now time.Time) error {
	h := contract.Halt{Since: now.UTC().Truncate(time.Second), Reason: v.Reason}
	var names []string
	for _, pl := range plans {
		h.Changes = append(h.Changes, pl.change)
		names = append(names, pl.change.Source)
	}
	r.metrics.halted(req.KindName, r.planner)
	base := client.MergeFrom(obj.DeepCopyObject().(client.Object))
	a := obj.GetAnnotations()
	if a == nil {
		a = map[string]string{}
	}
	a[contract.HaltAnnotation] = h.String()
	obj.SetAnnotations(a)
	if err := r.client.Patch(ctx, obj, base, client.FieldOwner(contract.FieldManager)); err != nil {
		return fmt.Errorf("recording the halt on %s: %w", req, err)
	}
	sourcesOf := strings.Join(names, ", ")
	r.events.Eventf(obj, nil, corev1.EventTypeWarning, contract.ReasonRolloutHalted, "Restamp",
		"rollout for %s failed (%s); the change goes to no other reader until it changes again or %s is set to %q",
		sourcesOf, v.Reason, contract.HaltAnnotation, contract.HaltReleased)
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
	log.FromContext(ctx).Info("change halted", "workload", req.String(), "sources", names, "reason", v.Reason)
	return nil
}
