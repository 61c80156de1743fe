package restamp

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/confighash/confighash/hasher"
	"github.com/confighash/confighash/internal/contract"
	"github.com/confighash/confighash/internal/health"
	"github.com/confighash/confighash/internal/workload"
)

// staleReader is a reader the read and check stages found stale: what the
// wave gate and the stamp writer need of it.
type staleReader struct {
	req      Request
	kind     workload.Kind
	obj      client.Object
	template workload.Template
	refs     []hasher.Reference
	lookup   hasher.Lookup
	// current is its stamp, fresh the checksum its sources give now.
	current, fresh string
	// p is what its changes recorded.
	p pending
	// namespace is the annotations of its namespace, as the policy read
	// them: its rollout window and freezes.
	namespace map[string]string
}

// restamp takes a stale reader through the wave gate (gate) and, if it may
// go, the stamp writer (writeStamp).
func (r *reconciler) restamp(ctx context.Context, s staleReader) outcome {
	// Whether its previous re-stamp's rollout was still going: the flap
	// guard counts only such re-stamps, or content that came back.
	_, wasRolling := r.planner.inFlight(identity(s.req))
	g, err := r.gate(ctx, s, s.p.withSources(r.changes.since(s.req)).names())
	if err == nil && g.window {
		// Waiting for its window or a freeze: the changes are kept, and
		// the planner learns it asks for no slot meanwhile.
		o := ended(g.wait, keep, nil)
		o.news = newsWindow
		return o
	}
	if err != nil || !g.ok {
		// Waiting for its wave, the bound or a halt: the changes are kept
		// for the re-stamp that comes when it may go.
		return ended(g.wait, keep, err)
	}
	return r.writeStamp(ctx, s, g, wasRolling)
}

// writeStamp is the stamp writer: within the write budget, and for a
// re-check once the content is confirmed live, it writes the fresh stamp
// (and with waves the rollout record g carries) with the optimistic lock,
// then counts, reports and logs the re-stamp. A re-stamp admitted to the
// waves but not written comes out as newsAborted, so that it waits again.
func (r *reconciler) writeStamp(ctx context.Context, s staleReader, g gated, wasRolling bool) outcome {
	req, obj := s.req, s.obj
	aborted := func(f fate, err error) outcome {
		return outcome{fate: f, err: err, news: newsAborted, flight: g.flight}
	}
	if err := r.budget.Wait(ctx); err != nil {
		return aborted(keep, fmt.Errorf("waiting for write budget: %w", err))
	}
	confirmed, err := r.confirmLive(ctx, req, s.refs, s.fresh)
	if err != nil {
		return aborted(keep, err)
	}
	if !confirmed {
		return aborted(forget, nil)
	}
	from := obj.GetResourceVersion()
	if err := r.patch(ctx, req.KindName, obj, s.template, s.fresh, g.record); err != nil {
		return aborted(keep, err)
	}
	r.written.wrote(identity(req), from)
	o := outcome{fate: forget, news: newsWritten, flight: g.flight, stamp: s.fresh}
	why, nothingToRun := health.NothingToRun(s.kind, obj)
	// The flap guard counts a re-stamp that went through no wave, or whose
	// rollout there is nothing to wait for, as it did before waves; one in
	// waves only while its previous rollout was still going.
	r.flaps.restampedTo(keyOf(req), r.now(), s.fresh, g.flight == nil || nothingToRun || wasRolling)
	logger := log.FromContext(ctx)
	if g.flight != nil && nothingToRun {
		// It starts no pod, so it can break nothing: its wave need not
		// wait for its controller (health.NothingToRun).
		logger.V(1).Info("nothing to roll out", "reason", why)
		o.news = newsWrittenIdle
	}
	reason := restampChanged
	if s.current == "" {
		reason = restampFirstStamp
	}
	if req.Recheck {
		reason = restampRecheck
	}
	r.metrics.restamped(req.KindName, req.Namespace, reason)
	changed := s.p.withSources(r.changes.since(req)).names()
	r.events.Eventf(obj, nil, corev1.EventTypeNormal, contract.ReasonConfigChanged, "Restamp",
		"config changed (%s); re-stamped pod template", strings.Join(changed, ", "))
	logger.Info("re-stamped", "sources", changed, "reason", reason, "from", s.current, "to", s.fresh)
	return o
}
