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
// one. If the Secret holds another key, the replica exits and its restart
// reads that key. Replicas can therefore stamp with different keys for at
// most one Keeper interval (DefaultInterval).
//
// # A new key rolls nothing
//
// Every stamp names its key (hasher.KeyID). A stamp made under another key
// cannot be compared with the content, so the config-update hook leaves it
// alone, reports it (a KeyChanged Warning Event on the workload,
// confighash_stamps_kept_total{reason="other-key"}, a log line) and
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
// Within one Keeper interval every replica sees it and restarts onto it (a
// KeyChanged Event on the Secret). Nothing rolls: each workload keeps its
// old-key stamp until its config next changes. If the old key leaked, stamps
// made under it still let its holder test guesses; retire them at once with
// `kubectl rollout restart` of each workload, which changes the template, so
// the webhook stamps it under the new key (and rolls it once). Deleting the
// Secret does not rotate the key: a running replica puts it back.
package hashkey
