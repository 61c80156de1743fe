// Package hashkey provides the HMAC key that makes checksums safe to publish.
//
// The stamp sits in pod templates that many people can read. Keyed with a
// secret only confighash holds, it cannot be used to test guesses of a
// Secret's value offline. The key lives in a Secret in confighash's own
// namespace (confighash-hmac-key, data key hmac-key); every replica must
// stamp with the same one.
//
// # One key for all replicas
//
// Ensure reads the Secret at start-up and creates it only when it does not
// exist, with Create: when two replicas race, the second gets AlreadyExists
// and reads the first one's key. A Keeper then re-reads the Secret every few
// seconds on every replica. If the Secret was deleted, the Keeper puts back
// the key it holds, so a replica that restarts later does not make a new
// one. If the Secret holds another valid key, the replica exits after a
// delay of its own and its restart reads that key. Replicas can therefore
// stamp with different keys for at most the restart window plus one Keeper
// interval (DefaultRestartWindow + DefaultInterval, about 65 s).
//
// # A bad key stops nothing
//
// A running replica holds the Secret to the same check as a starting one
// (keyOf: data key hmac-key, at least 32 bytes). A Secret that fails it (a
// typo in a rotation: a short or empty key, the key under another data key)
// is reported, a KeyInvalid Warning Event on the Secret, a log line saying
// what is wrong (sizes and data key names, never bytes) and
// confighash_hmac_key_checks_total{result="invalid"}, and the replica keeps
// stamping with the key it holds. Exiting would be worse than useless: the
// restart refuses the Secret, so every replica would crash-loop at once. A
// replica that starts while the Secret is bad still fails (it has no key to
// keep); the others serve until the Secret is fixed. The Keeper never
// rewrites such a Secret: it is the person's to fix.
//
// # Restarts are staggered
//
// All replicas see a rotation within one interval of each other; restarting
// at once would leave no ready replica (the webhook fails open, so writes
// pass unstamped meanwhile). Each replica therefore waits before it exits:
// with leader election, a follower a random time within the first half of
// the window (DefaultRestartWindow, 1 minute) and the leader the whole
// window, so followers are normally back, on the new key, before the
// leader (which also serves the webhook) goes and hands the hook over. The
// PodDisruptionBudget does not apply to container restarts; this does the
// same job. Without leader election each replica draws from the whole
// window. The decision is made on a fresh read: a Secret put back to the
// key in use, or made invalid, during the wait restarts nothing.
//
// # A new key rolls nothing
//
// Every stamp names its key (hasher.KeyID). A stamp made under another key
// cannot be compared with the content, so the config-update hook leaves it
// alone, reports it (a KeyChanged Warning Event on the workload,
// confighash_hook_stamps_kept_total{reason="other_key"}, a log line) and
// re-stamps the workload under the new key on its next config change, which
// rolls it then, as any config change does. The webhook keeps the stored
// stamp on every write that leaves the template as it was. The key is only
// truly lost (a new one created) when the Secret is deleted while no replica
// runs; that, too, rolls nothing, and is logged with the new key's ID.
//
// # Rotating the key deliberately
//
// Write a new key (at least 32 random bytes) into the existing Secret, for
// example:
//
//	kubectl -n confighash-system create secret generic confighash-hmac-key \
//	  --from-literal=hmac-key="$(head -c 32 /dev/urandom | base64)" \
//	  --dry-run=client -o yaml | kubectl apply -f -
//
// Within one Keeper interval every replica sees it, and within about a
// minute more each has restarted onto it (a KeyChanged Event on the Secret
// per replica, saying when). A mistyped key restarts nothing (KeyInvalid).
// Nothing rolls: each workload keeps its
// old-key stamp until its config next changes. If the old key leaked, stamps
// made under it still let its holder test guesses; retire them at once with
// `kubectl rollout restart` of each workload, which changes the template, so
// the webhook stamps it under the new key (and rolls it once). Deleting the
// Secret does not rotate the key: a running replica puts it back.
package hashkey
