package restamp

import (
	"context"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/confighash/confighash/internal/contract"
	"github.com/confighash/confighash/internal/waves"
)

// The hook's records on a workload (contract.RolloutAnnotation,
// HaltAnnotation, HoldAnnotation) are written by it and read back sealed
// (contract.Subject): these are the only ways the hook reads them. A
// record that is not the hook's for the workload, is too long or dates
// from the future is reported once (recordWarnings) and counts as absent.

// subjectOf names obj, a workload of the kind named kindName
// (workload.Kind.Name, Request.KindName), as its records' MACs bind it.
func subjectOf(kindName string, obj client.Object) contract.Subject {
	return contract.Subject{Kind: kindName, Namespace: obj.GetNamespace(), Name: obj.GetName(), UID: string(obj.GetUID())}
}

// rolloutRecord is obj's rollout record: what the hook last re-stamped it
// for, and when. ok is false when it has none the hook can trust: none at
// all, or one it did not seal for this workload, too long, or dated ahead.
// A record without any of that is what a reader never re-stamped has: it
// is in no flight, its crashes date from no re-stamp, and which of its
// sources changed is told without it.
func (r *reconciler) rolloutRecord(ctx context.Context, kindName string, obj client.Object) (contract.Rollout, bool) {
	v, has := obj.GetAnnotations()[contract.RolloutAnnotation]
	if !has {
		return contract.Rollout{}, false
	}
	rec, err := contract.ReadRollout(r.key, subjectOf(kindName, obj), v, r.now())
	if err != nil {
		r.recordWarns.warn(ctx, r.events, obj, contract.RolloutAnnotation, v, err, "it is ignored")
		return contract.Rollout{}, false
	}
	return rec, true
}

// haltOf is what obj's halt annotation means to the hook: only a halt it
// sealed for obj is in force. Any other value but contract.HaltReleased
// holds nothing back, with a warning: one copied from another workload or
// written by hand would otherwise halt the change for every other reader of
// its source (planner.install halts a whole plan on one member's halt).
func (r *reconciler) haltOf(ctx context.Context, kindName string, obj client.Object) waves.Halt {
	h := waves.HaltOf(obj.GetAnnotations(), func(v string) (contract.Halt, error) {
		return contract.ReadHalt(r.key, subjectOf(kindName, obj), v, r.now())
	})
	if h.State == waves.HaltIgnored {
		r.recordWarns.warn(ctx, r.events, obj, contract.HaltAnnotation, obj.GetAnnotations()[contract.HaltAnnotation], h.Err, "it is ignored")
	}
	return h
}

// haltRecord is obj's halt record, if it is in force (ok; haltOf).
func (r *reconciler) haltRecord(ctx context.Context, kindName string, obj client.Object) (contract.Halt, bool) {
	h := r.haltOf(ctx, kindName, obj)
	return h.Record, h.State == waves.HaltInForce
}

// sealRollout sets rec, sealed for obj, as obj's rollout record in a (obj's
// annotations, about to be written); a record too long to be read back is
// not written at all, and none is left that names an earlier re-stamp.
func (r *reconciler) sealRollout(kindName string, obj client.Object, a map[string]string, rec contract.Rollout) {
	if v := rec.Sealed(r.key, subjectOf(kindName, obj)); v != "" {
		a[contract.RolloutAnnotation] = v
		return
	}
	delete(a, contract.RolloutAnnotation)
}

// sealHalt is h's value sealed for obj.
func (r *reconciler) sealHalt(kindName string, obj client.Object, h contract.Halt) string {
	return h.Sealed(r.key, subjectOf(kindName, obj))
}

// holdRecord is obj's flap hold record, nil when it has none the hook can
// trust (as rolloutRecord); its quiet time is at most --flap-quiet-max. A
// hold the hook cannot trust is ignored rather than honoured for a quiet
// time: honouring it would let anyone who writes the workload keep it from
// its config for good, by writing a new one whenever the last ended.
func (r *reconciler) holdRecord(ctx context.Context, kindName string, obj client.Object) *contract.Hold {
	var maxQuiet time.Duration
	if r.flaps != nil {
		maxQuiet = r.flaps.opts.FlapMaxQuiet
	}
	h := waves.HoldOf(obj.GetAnnotations(), func(v string) (contract.Hold, error) {
		return contract.ReadHold(r.key, subjectOf(kindName, obj), v, r.now(), maxQuiet)
	})
	switch h.State {
	case waves.HoldIgnored:
		r.recordWarns.warn(ctx, r.events, obj, contract.HoldAnnotation, obj.GetAnnotations()[contract.HoldAnnotation], h.Err, "it is ignored")
	case waves.HoldInForce:
		return &h.Record
	}
	return nil
}

// sealHold is h's value sealed for obj.
func (r *reconciler) sealHold(kindName string, obj client.Object, h contract.Hold) string {
	return h.Sealed(r.key, subjectOf(kindName, obj))
}
