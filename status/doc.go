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
// That fresh stamp always has the current format, so it cannot show that a
// legacy v1 stamp, which the hook keeps while the content is unchanged, is
// still current. For such a stamp status also sends a server-side dry-run
// UPDATE of the workload carrying confighash.dev/verify-stamp, and the
// webhook answers with the stamp the hook would leave: the stored one if it
// still matches. A stamp made under another HMAC key is reported as unknown:
// nobody can compare it with the content any more.
//
// Collect and CheckInstall gather facts into plain structs (Report and
// InstallReport); Classify turns a workload's facts into its State; the
// Write functions render them as a table or as JSON. Only the gathering
// talks to the API server.
package status
