// Package pinning is the pure core of pinned config: what a revision's pods
// read of a source is copied into an immutable snapshot, and a pod's
// references are rewritten to the snapshots its stamp names, so that every
// pod of a revision reads exactly the content its stamp names, whatever
// starts it and whenever.
//
// The package has no API client: it decides which sources pin (policy.go),
// names and builds snapshots (snapshot_name.go, snapshot.go), checks that an
// object is a snapshot confighash made for a given stamp (verify.go,
// stamp_seal.go) and rewrites a pod spec (rewrite.go). docs/design/pinning.md
// is the design the rest of the feature follows.
//
// # Trust
//
// Everything a pod is pointed at is checked twice. A snapshot's name carries
// a keyed digest of its own content, so an object under that name with other
// content (a look-alike a tenant created first) is refused. And the label
// that says a snapshot serves a stamp is sealed under the key for that stamp
// and that snapshot, so it can be neither forged nor copied onto the same
// source's newer snapshot. Both MACs use confighash's key, each under a
// domain of its own, apart from the checksum's and the records'.
package pinning
