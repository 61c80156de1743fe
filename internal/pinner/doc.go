// Package pinner is the API side of pinned config (package pinning is the
// pure side): for a new pod of a pinning namespace it finds the snapshots
// its revision's stamp names, or makes them while the live content is
// still what the stamp names, and says which sources to point the pod at.
//
// # Steps, for one pod (Pin)
//
//	revision.go  the pod's revision: its controller (a ReplicaSet), read
//	             live; its template must carry the pod's stamp; the
//	             workload's opt-out (confighash.dev/pin: "off")
//	sealed.go    the snapshots sealed to that stamp, by label selector;
//	             a complete, verified set is used as it is (the revision
//	             added as an owner where it is not yet one)
//	make.go      else the live sources, checksummed: when they still give
//	             the stamp, the snapshots are created (or an existing one
//	             verified and sealed), owned by the revision
//
// Every way a pod is not pinned is a Reason, never an error to the caller:
// admission of a pod is never denied. Writes are at most one per pinned
// source per revision; a later pod of the revision finds the set and writes
// nothing. A dry run writes nothing and is not pinned.
//
// Snapshots are owned by the revisions that use them, so the garbage
// collector removes them with the last one: revisionHistoryLimit prunes them
// with their ReplicaSets, and deleting a workload deletes them all.
package pinner
