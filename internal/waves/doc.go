// Package waves says in which order the readers of one change are
// re-stamped: the plan that the hook follows and `confighash preview`
// shows. It is also the one home of what confighash's annotations mean to
// the waves, read by the hook, `preview` and `status` alike: waves off on
// a reader or a source (Off, PaceOf), the order (OrderOf), a halt and its
// release (HaltOf), a flap hold (HoldOf). It is pure: members,
// annotations and an opener of records in, typed answers out. The hook
// opens records with its key; `preview` and `status`, which have none,
// with contract's unverified readers.
//
// # Decisions
//
//   - The first wave is one reader, the change's canary. Each next wave is
//     twice the size of the one before, as the ReplicaSet controller's slow
//     start grows its batches, up to a cap (--max-wave-size): 1, 2, 4, ...
//     Doubling keeps the number of waves logarithmic in the readers, so a
//     shared config read by 200 workloads goes in 8 waves, not 200, while
//     a bad value still reaches only one reader first.
//   - The order is the readers' contract.RolloutOrderAnnotation (lower
//     first, 0 when unset), then namespace, kind and name: deterministic,
//     so every replica, a restart and `preview` agree on it, and
//     documented, so a user can put a staging Deployment first.
//   - A reader whose annotation is not an integer sorts as 0; the hook
//     reports the bad value with an InvalidAnnotation warning.
package waves
