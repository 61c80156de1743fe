// Package contract is confighash's user-facing contract on Kubernetes
// objects: the annotation and label keys (and their switch values) that
// users write and that confighash writes back, the field manager and
// reporting controller confighash writes under, the reasons of its Events,
// and the format of the hold annotation's value.
//
// Users' manifests, GitOps settings (docs/argocd.md), Event filters and
// alerts spell these names. Renaming or re-spelling anything here breaks
// users: add, never change. README.md's annotation table lists every key,
// and docs/operations.md's Event table every reason here (with the type and
// objects EventOf gives it); TestReadmeReference fails when they differ, on
// a duplicated row, or on a table in those sections it does not know.
//
// The package imports nothing of confighash's, so that every package can
// use it (hasher, which stays a pure function, included), and it holds no
// logic beyond reading and writing its own values: what a key means to a
// workload (opting out, being ignored, holding) is decided where it is
// used.
//
// Deliberately not here, because no user writes or reads them: the field
// index sources.ReadersIndex (a name inside the informer cache) and the
// slimmed marker of cached sources. Metric names and command-line flags are
// contracts too, kept where they are defined.
package contract
