// Package restamp is the config-update hook: when a ConfigMap or Secret
// changes, it re-stamps the workloads that read it, so that their checksum
// changes and Kubernetes rolls them in the ordinary way.
//
// # Pipeline
//
// One change to a ConfigMap passes these stages, each in the files named by
// its prefix; setup.go wires them, options.go holds the settings (one flag
// each), metrics.go the series, and doc.go is this map. Every file of the
// package is named here (TestStageMapNamesEveryFile).
//
//	watch      watch_kinds.go, watch_custom.go, watch_index.go
//	             the workload kinds followed; a custom kind once served;
//	             the readers index, made as the hook's sources start
//	event      event_enqueue.go
//	             source event -> its readers, from the field index; a
//	             workload's own write -> a re-check, RecheckDelay later;
//	             a reader in flight, halted or deleted -> judged again
//	queue      queue_request.go, queue_pending.go, queue_debounce.go,
//	           queue_window.go, queue_settle.go, queue_fair.go
//	             per workload: the changed sources, their content before,
//	             the trailing window; the settler holds the request until
//	             the window ends; round-robin over namespaces
//	reconcile  reconcile.go, reconcile_outcome.go
//	             Reconcile runs the stages below in order; reconcile takes
//	             the pending entry once; the cache behind our own last
//	             write (write_expect.go)? served? template? sources read,
//	             checksum, missing sources; every way out is one outcome,
//	             from which the waves are told (tellWaves) and the requeue
//	             set (requeue), once
//	judge      wave_health.go, wave_pods.go
//	             the health judge (judge), first: the rollout of a reader in
//	             flight, from its status and its new revision's pods (listed
//	             live, paged, bounded): succeeded, failed (a halt, recorded
//	             on the reader), released by hand, or still going
//	check      check_hold.go, check_flap.go, check_hold_annotation.go,
//	           check_stamp.go, check_priors.go, check_ignored.go,
//	           check_rolledback.go
//	             rolled back (kept until a source changes)? held? stale,
//	             or kept (other key, ignore toggle)? a re-check confirmed
//	             live?
//	gate       wave_gate.go, wave_window.go, wave_plan.go,
//	           wave_plan_state.go, wave_planner.go, wave_fair.go,
//	           wave_before.go
//	             the wave gate (gate): the changes a stale reader is due;
//	             its rollout window and freezes (wave_window.go, decided by
//	             internal/window): wait until they allow it; each change's
//	             plan (built from the readers' records), and the planner's
//	             admission: go now, or wait for an earlier wave, a slot of
//	             the bound, or a halt. The planner is a state machine
//	             (planState) behind one lock (planner). A reader failing
//	             before the change (wave_before.go) is no canary: it goes
//	             at once, unjudged
//	write      write_restamp.go, write_stamp.go, write_expect.go,
//	           write_hold.go
//	             the stamp writer (writeStamp): the write budget, the live
//	             confirmation, the stamp and the rollout record with the
//	             optimistic lock, the copy it was patched from remembered;
//	             the hold annotation
//	records    records.go, records_warn.go
//	             the hook's records on a workload, sealed for it as they
//	             are written and verified as they are read; a bad one
//	             reported once
//
// Readers are found through a field index over the workload kinds (keys from
// the hasher's reference discovery), never by listing a namespace. Events are
// coalesced per workload over a trailing window (queue_debounce.go), writes
// share a global budget, and a workload re-stamped too often is held until
// its sources settle (check_flap.go). The hold is also written on the
// workload's own metadata (contract.HoldAnnotation), so that a new leader honours it.
//
// What a workload's changes recorded (queue_pending.go) is taken once, as
// its reconcile starts, and put back only when the reconcile is to run again
// for them: a hold looked at again, an error retried with backoff (but a
// failed read of the workload or of its namespace, which forgets them). Each
// way out of reconcile says which, so none can leave an entry behind; a
// reconcile that panics keeps them.
//
// Every template change is re-checked a moment later (event_enqueue.go),
// because the webhook stamped it from the answering replica's view, which
// may lag; a re-check writes only once a live read confirms what its cache
// says (check_stamp.go), so that it never rolls a workload by itself.
//
// No namespace can starve another. The queue hands out ready requests
// round-robin over namespaces, first in, first out within one
// (queue_fair.go), so a flood in one namespace delays a change in another by
// about one reconcile per worker, not by the flood. The work per reconcile
// is bounded: a few checksums of at most workload.MaxSources sources each
// (the fresh one, the live confirmation of a re-check, the hold's check
// that nothing changed), and, when a stamp differs, a check for an ignore
// toggle whose tries are bounded in bytes hashed and that starts with the
// toggles the hook saw (check_ignored.go). A held workload is held before
// that check is made.
//
// The waves keep that bound and that fairness (wave_plan.go, wave_fair.go,
// wave_gate.go). Planning a change checks at most planChecks of its readers
// for staleness (twice --max-wave-size, at most 64, in the waves' order:
// a checksum and a content ID per source each); the others are members
// checked by their own reconcile, and settled there if current, so a plan
// costs a fixed number of checksums however many readers a tenant makes,
// and a reader that starts no pod costs none. The slots of
// --max-concurrent-rollouts are shared as the queue is: a free one goes to
// the waiting namespace that holds the fewest, ties in turn; a namespace
// holding more is refused one while another waits; a re-stamp of a reader
// already rolling needs a slot like any other; and --rollout-timeout counts
// from a reader's first re-stamp while it rolls, so rollouts that never end
// free their slots within one timeout whatever re-stamps them. Flights a
// new leader rebuilds from the records keep the same bound.
//
// Only the leader caches workloads, and only as the copies
// workload.SlimObject makes (the manager's cache transform): identity, the
// annotations the hook reads, the judge's fields, and a template reduced to
// its stamp, a digest and its references. The readers index of the
// built-in kinds, which starts their informers, is made as the hook's
// sources start (watch_index.go), a custom kind's once it is served
// (watch_custom.go). Every write to a workload is a merge patch diffed from
// that copy or written by hand, never an update, so what the copy leaves
// out is never written. The judge lists a reader's pods live, paged and
// bounded, and keeps the new revision's only (wave_pods.go).
//
// Only the leader runs it. On a workload it writes the stamp, only when it
// differs, and its own records, each sealed for the workload (records.go):
// with waves, the rollout record (contract.RolloutAnnotation: what it was
// re-stamped for, and when), in the same patch as the stamp; the halt
// record (contract.HaltAnnotation) when its rollout fails (again if it
// goes missing while the halt stands), rewritten without a change whose
// source moved on to newer content, or dropped; and,
// during a flap hold, the hold (contract.HoldAnnotation, write_hold.go),
// which the re-stamp that ends the hold drops. Each is a merge patch under
// the field manager "confighash". The webhook passes a write that changes
// nothing but the stamp through only under that field manager (from anyone
// else it puts the stored stamp back), so the two never fight. It also
// posts Events, on the workload and, for a halt, on the source.
//
// Its settings are Options, validated once (Validate, which Setup also
// asks): nothing downstream clamps them.
package restamp
