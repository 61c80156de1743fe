// Package preview says what applying one changed ConfigMap or Secret would
// roll: which workloads re-stamp, for which of the keys they read, and in
// which waves; and which readers would not, and why. It is
// `confighash preview -f FILE`, for a reviewer who wants the blast radius
// of a pull request before it merges.
//
// As internal/status, it is three steps: Parse and Gather read the input
// and the cluster into Facts, Compute turns Facts into a Report and is
// pure (the unit tests run it without a cluster), WriteTable and WriteJSON
// render it.
//
// # Decisions
//
//   - It reads, never writes, not even a dry run: Gather takes a
//     client.Reader. It reads the namespace, the live source, the workloads
//     of the served mutable kinds in that namespace, and their other
//     sources. So, unlike status, it needs read access to the Secrets it
//     previews and their readers read: it compares content.
//   - Values never leave the reads. Every source, live or from the input,
//     is digested at once through the hook's own sources.Slimmer (one
//     SHA-256 per value, under the same --max-source-keys bound), and the
//     Report names keys, never values or digests. Errors about the input
//     name a line or an offset, never its text.
//   - Readers are found with workload.ReadsOf, the one reads function: its
//     Skip reasons, the include and exclude annotations and the opt-out
//     are those of the webhook and the hook. A reader whose template reads
//     the source but whose confighash.dev/exclude drops it is listed as not
//     rolling. Only the mutable kinds are looked at: the hook re-stamps no
//     other.
//   - Whether a reader rolls is whether its checksum changes:
//     hasher.Checksum twice, once with the live source and once with the
//     input's in its place, every other source as it is live (the same in
//     both). The key is a random one made in-process, not confighash's:
//     only the equality of the two matters, and HMAC-SHA256 outputs under
//     one key are equal exactly when they are under another (but for
//     SHA-256 collisions). So the EnvOnly and key-list rules, a listed key
//     that is missing, a source created, are exactly the hasher's. Which
//     keys changed is then read off the digests, restricted to what the
//     reader reads.
//   - The hook's other reasons not to roll are applied in its order: the
//     namespace policy (internal/injection) first, then the ignore
//     annotation on the source, live or in the input (neither an ignored
//     source's content nor toggling the annotation rolls anyone), a source
//     over the key bound, the workload being deleted or skipped, excluded,
//     and a required source that is missing after the change (the hook
//     keeps the stamp until it exists). An immutable live source whose
//     content would change rolls nothing: the apiserver refuses the write.
//   - Waves are internal/waves' plan over the readers that roll, with
//     each reader's confighash.dev/rollout-order (waves.OrderOf) and
//     --max-wave-size (16 by default, as the hook's). A reader, or the
//     input, with confighash.dev/waves=off rolls at once, outside the
//     waves; it is listed first. The source's annotation is read from the
//     input: the hook acts on the source as it is after the change.
//   - The hook looks at every reader of a source whose content changes,
//     and re-stamps one whose stamp is not what the sources give. So a
//     reader with no stamp, or one of an old format, rolls even when none
//     of the keys it reads changes; preview says so (Rolling.Reason). A
//     stamp of the current format that is already stale cannot be told
//     without confighash's key (status tells it, by a dry run, which
//     preview never makes): preview answers for the change alone.
//   - It does not look at the hook's state: a workload on flap hold or
//     behind a halted change is shown as it would roll once that ends.
//   - A custom kind the hook refuses to watch (kindcheck, as status asks
//     it) rolls nothing.
//   - The exit code is 0 whether or not something rolls (1 when the
//     cluster cannot be read, 2 for a bad command line or input): the
//     preview is a report, not a check.
package preview
