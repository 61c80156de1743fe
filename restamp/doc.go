// Package restamp is the config-update hook: when a ConfigMap or Secret
// changes, it re-stamps the workloads that read it, so that their checksum
// changes and Kubernetes rolls them in the ordinary way.
//
// Readers are found through a field index over the workload kinds (keys from
// the hasher's reference discovery), never by listing a namespace. Events are
// coalesced per workload over a trailing window (debounce.go), writes share a global budget,
// and a workload re-stamped too often is held until its sources settle
// (flap.go). The hold is also written on the workload's own metadata
// (contract.HoldAnnotation), so that a new leader honours it.
//
// Every template change is re-checked a moment later (enqueue.go), because
// the webhook stamped it from the answering replica's view, which may lag;
// a re-check writes only once a live read confirms what its cache says
// (stampcheck.go), so that it never rolls a workload by itself.
//
// No namespace can starve another. The queue hands out ready requests
// round-robin over namespaces, first in, first out within one
// (fairqueue.go), so a flood in one namespace delays a change in another by
// about one reconcile per worker, not by the flood. The work per reconcile
// is bounded: a few checksums of at most workload.MaxSources sources each
// (the fresh one, the live confirmation of a re-check, the hold's check
// that nothing changed), and, when a stamp differs, a check for an ignore
// toggle whose tries are bounded in bytes hashed and that starts with the
// toggles the hook saw (ignored.go). A held workload is held before that
// check is made.
//
// Only the leader runs it. It writes only the stamp, with a merge patch under
// the field manager "confighash", and only when the stamp differs. The
// webhook passes a write that changes nothing but the stamp through only
// under that field manager (from anyone else it puts the stored stamp back),
// so the two never fight.
package restamp
