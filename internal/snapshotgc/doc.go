// Package snapshotgc keeps pinned config's snapshots alive exactly as long
// as something reads them (docs/design/pinning.md, "Lifetime"). It runs on
// the leader only, in pinning namespaces only.
//
// The garbage collector does most of it: the pinner makes every revision
// that uses a snapshot one of its owners, so pruned revisions take their
// snapshots with them and a deleted workload leaves none. What it cannot
// see is a revision deleted with --cascade=orphan: it strips that owner
// from the snapshot as from the pods, and the pods run on, reading a
// snapshot that either belongs to nobody (left forever) or to other
// revisions only (deleted with them, under pods that still read it).
//
// So when a snapshot loses an owner, this package looks at the pods of its
// namespace: every pod that reads a snapshot and whose own revision (its
// ReplicaSet or Job, or the ControllerRevision of a StatefulSet's or
// DaemonSet's pod) is not among its owners is made one of them (the
// collector then removes the snapshot with the last such pod), and a
// snapshot with no owner and no reader is deleted, once verified to be
// confighash's.
//
//	watch.go     metadata-only informers of snapshot-labelled ConfigMaps and
//	             Secrets; a lost owner queues the snapshot's namespace
//	readers.go   who reads which snapshot: the namespace's pods, paged
//	plan.go      what to write, from the snapshots and their readers (pure)
//	writes.go    the owner patches and the deletes, each of a verified snapshot
//	metrics.go   confighash_hook_snapshots{namespace}
//
// Work is per namespace, coalesced: a burst of lost owners (the collector
// patches each dependent in turn) costs one paged LIST of pods, and a
// namespace is looked at once per Coalesce at most.
package snapshotgc
