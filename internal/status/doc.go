// Package status explains, workload by workload, whether confighash has
// stamped a pod template with the checksum its config gives now, and checks
// that the webhook is installed so that it can.
//
// It never reads the HMAC key, nor any ConfigMap or Secret value: sources
// are checked for existence with metadata-only reads, and the checksum the
// sources give now is obtained from the live webhook by a server-side
// dry-run CREATE of a copy of the workload, which the webhook stamps afresh
// and the API server does not persist. A status user therefore needs no
// access to confighash's Secrets.
//
// A stamp not of the current format (a legacy v1 stamp) is reported as
// stale without asking anything more: the hook compares it with nothing and
// re-stamps it. A stamp made under another HMAC key is reported as unknown:
// nobody can compare it with the content any more.
//
// A halt needs no key either. The hook records it on the failing workload
// (confighash.dev/halt, naming the changes by source and keyed digest), so
// that workload is halted whatever its stamp, and a stale reader of a
// halted source in the same namespace is waiting rather than stale: the
// hook keeps its stamp on purpose. To find the halting readers, Collect
// indexes the halts of the namespace's workloads by source: from the
// workloads it listed anyway when no workload is named, and otherwise from
// one metadata-only list per served kind, never one list per source. A
// released halt holds back nobody, nor does one that cannot be read or has
// no seal: the hook ignores both, and the workload's state is its stamp's.
// The rollout record (confighash.dev/rollout) is shown and decides
// nothing.
//
// The hook seals its records (rollout, halt, hold) with a MAC under its
// key, bound to the workload, and ignores a record that does not verify.
// Status has no key: it shows a sealed record as "sealed, unverified", and
// one without a seal as ignored (such a hold does not make the workload
// held, nor such a halt halted, nor its source's readers waiting).
//
// Collect and CheckInstall gather facts into plain structs (Report and
// InstallReport); Classify turns a workload's facts into its State; the
// Write functions render them as a table or as JSON. Only the gathering
// talks to the API server.
package status
