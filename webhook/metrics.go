package webhook

import (
	"errors"
	"fmt"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/confighash/confighash/internal/pinner"
)

// Metrics are the handler's Prometheus series.
type Metrics struct {
	// Checksums counts checksums computed, which happens only on CREATE and
	// on real template changes; a climbing rate means many template edits.
	Checksums prometheus.Counter
	// Answers counts responses by what the handler did.
	Answers *prometheus.CounterVec
	// Refused counts requests the endpoint's limits turned away before
	// handling them, by reason: too_large, busy (no slot), no_buffer (no
	// room for the body), incomplete (the body did not arrive in time),
	// connections (a connection over the per-address bound). The apiserver admits those writes
	// unstamped (failurePolicy Ignore), so a rising count means missed stamps.
	Refused *prometheus.CounterVec
	// Pods counts the pods the pinning path admitted (--pinning), by
	// result: pinned, or the pinner.Reason it was not. Every pod it
	// answers is admitted; a rising count of a reason is pods reading live
	// content.
	Pods *prometheus.CounterVec
	// SnapshotWrites counts the pinning path's writes to the apiserver, so
	// an operator sees what pinning costs it.
	SnapshotWrites prometheus.Counter
}

// outcome is what the handler did with a request: the answers metric's
// label. The handler decides it with the answer; it never reads it back from
// the answer's message.
type outcome string

// Answer labels.
const (
	answerStamped   outcome = "stamped"
	answerRestored  outcome = "restored"
	answerUnchanged outcome = "unchanged"
	answerError     outcome = "error"
	// answerUnauthenticated: the caller is not the apiserver (see Callers).
	answerUnauthenticated outcome = "unauthenticated"
)

// Refusal reasons.
const (
	refusedTooLarge = "too_large"
	refusedBusy     = "busy"
	// refusedNoBuffer: the body budget had no room before the read timeout.
	refusedNoBuffer = "no_buffer"
	// refusedIncomplete: the body did not arrive in full in time.
	refusedIncomplete = "incomplete"
	// refusedConnections: a connection over the per-address bound, closed
	// at once.
	refusedConnections = "connections"
)

// NewMetrics creates the series and registers them on reg.
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	m := &Metrics{
		Checksums: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "confighash_webhook_checksum_computations_total",
			Help: "Checksums computed by the admission webhook.",
		}),
		Answers: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "confighash_webhook_answers_total",
			Help: "Admission answers by outcome: stamped, restored, unchanged, error, unauthenticated (the caller presented no accepted client certificate, see --webhook-client-ca-file).",
		}, []string{"outcome"}),
		Refused: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "confighash_webhook_refused_total",
			Help: "Admission requests turned away by the endpoint's limits before being handled, by reason: too_large, busy, no_buffer, incomplete, connections.",
		}, []string{"reason"}),
		Pods: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "confighash_webhook_pod_pinning_total",
			Help: "Pods the pinning webhook admitted (--pinning), by result: pinned, or why not (not_stamped, no_revision, opted_out, nothing_to_pin, content_moved_on, look_alike, too_many_stamps, dry_run, write_failed, quota_exceeded, read_failed, not_covered, forbidden).",
		}, []string{"result"}),
		SnapshotWrites: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "confighash_webhook_snapshot_writes_total",
			Help: "Writes the pinning webhook made to snapshots (--pinning): creates, and patches that seal a snapshot to another stamp or add an owner. At most one per pinned source for a revision's first pod, none for its later pods.",
		}),
	}
	if err := errors.Join(reg.Register(m.Checksums), reg.Register(m.Answers), reg.Register(m.Refused), reg.Register(m.Pods), reg.Register(m.SnapshotWrites)); err != nil {
		return nil, fmt.Errorf("registering webhook metrics: %w", err)
	}
	// Every child exists from the start at 0: an alert on increase() sees
	// the first event only if the series was there before it.
	for _, o := range []outcome{answerStamped, answerRestored, answerUnchanged, answerError, answerUnauthenticated} {
		m.Answers.WithLabelValues(string(o))
	}
	for _, r := range []string{refusedTooLarge, refusedBusy, refusedNoBuffer, refusedIncomplete, refusedConnections} {
		m.Refused.WithLabelValues(r)
	}
	for _, r := range pinner.Reasons() {
		m.Pods.WithLabelValues(podResult(r))
	}
	return m, nil
}

// answer counts one response; a Handler without metrics counts nothing.
func (m *Metrics) answer(o outcome) {
	if m != nil {
		m.Answers.WithLabelValues(string(o)).Inc()
	}
}

func (m *Metrics) refused(reason string) {
	if m != nil {
		m.Refused.WithLabelValues(reason).Inc()
	}
}

func (m *Metrics) checksum() {
	if m != nil {
		m.Checksums.Inc()
	}
}

// pinned counts one pod the pinning path admitted, and the snapshot writes
// its admission made.
func (m *Metrics) pinned(r pinner.Reason, writes int) {
	if m != nil {
		m.Pods.WithLabelValues(podResult(r)).Inc()
		m.SnapshotWrites.Add(float64(writes))
	}
}

// podResult is the result label of a pod pinned or not for reason r.
func podResult(r pinner.Reason) string {
	if r == pinner.Pinned {
		return "pinned"
	}
	return strings.ReplaceAll(string(r), "-", "_")
}
