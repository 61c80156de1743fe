// Package sources is how confighash holds and reads ConfigMaps and Secrets.
//
// The informer cache keeps them slimmed: every value is replaced by its
// SHA-256 digest, and metadata that can carry values (annotations such as
// kubectl's last-applied-configuration, managedFields) is dropped. No
// Secret value stays in the process. The webhook and the config-update hook
// read the same cache, so they compute the same checksum.
//
// Everything that hashes goes through Slim first, the cache and the live
// fallback alike, so there is exactly one way from an object to
// hasher.Content.
//
// # Memory is bounded per object
//
// The apiserver bounds a source's values, not its keys: a ConfigMap of
// 120,000 empty values passes, and held as one digest per key it cost
// about 19 MiB. In cluster-wide mode the cache sees every namespace, so a
// few dozen of those, anywhere, would crash every replica. Two rules bound
// what an object costs, whoever created it:
//
//   - A source of a namespace confighash does not serve (injection.Policy)
//     is cached as a placeholder: its identity (name, namespace, UID,
//     resourceVersion, timestamps) and a marker, nothing of its content.
//     The transform asks the Namespace cache, which it waits for, so the
//     first list is not slimmed against namespaces that have not arrived.
//   - A source with more than MaxKeys keys (--max-source-keys, default
//     DefaultMaxKeys) is a placeholder too, wherever it is. A workload that
//     reads one is treated like a template over workload.MaxSources: the
//     webhook leaves its stamp as it is and says which source, by name, in
//     a warning; the hook does not re-stamp it and raises a SourceTooLarge
//     Event. Never a crash, never a stamp from partial content. The live
//     reads apply the same bound (Reader.MaxKeys), so the webhook and the
//     hook agree on every source.
//
// A held source keeps one raw 32-byte digest per key, all of an object's
// digests in one backing array (two allocations an object, not one per
// key), and ConfigMap keys in BinaryData only (binaryData's keys behind
// binaryKey): raw bytes in a string field would not survive a JSON round
// trip.
//
// # A placeholder is never content
//
// Content refuses a placeholder with a *NotHeldError, so a checksum is
// never computed from content that is not there; in particular a
// placeholder is never hashed as an absent (optional) source, which would
// roll the workload to a wrong stamp.
//
// A namespace that becomes served after its sources were cached (it is
// labelled, or its Namespace arrives after them) has placeholders until
// each source next changes, when the transform holds its digests. Until
// then:
//
//   - The Filler reads the namespace's ConfigMaps and Secrets once, live, in
//     small pages, and Fills holds them. Fills.Reader, which the webhook's
//     cache reads and the manager's client (the hook's) read through, puts
//     a held copy in place of the placeholder only when it is of the same
//     version (UID and resourceVersion). A fill is dropped when the
//     informer sees its source change or go, or the namespace stop being
//     served. A failed fill is retried with backoff.
//   - Before the fill has landed, the webhook reads a placeholder live,
//     within its live-read budget (LivePerLookup). Out of budget, the
//     lookup fails: the webhook admits the write as it is, with a warning
//     that the source is not cached yet; the hook's re-stamp fails and is
//     retried with backoff, and succeeds once the fill has landed. Either
//     way the stamp does not change on unknown content.
//
// A namespace that stops being served keeps what the cache holds of its
// sources until each changes (or confighash restarts); no new digests are
// taken there.
//
// # Live reads
//
// Live reads are bounded per admission (Reader) and remembered for two
// seconds, misses and finds alike (Misses, RecentReads), so names the cache
// lacks cost one GET per name and TTL whoever sends them, outside
// PreferLive. A remembered miss is never hashed as absent: it may be from
// before the source was created, while the cache (the hook's view) has it
// already, or holds its placeholder while the fill runs; the lookup fails
// with Unconfirmed, and the webhook leaves the stamp as it is, rather than
// stamp an absence the hook's re-check would correct with a second
// rollout.
//
// A fresh read (PreferLive: a new or changed template) must see every
// write that completed before its admission began: Helm and kubectl write
// a ConfigMap, then the Deployment that reads it, and a stamp of the
// content before that write is a second rollout when the hook corrects it.
// Only a read sent after the admission began is sure to: so under
// PreferLive nothing remembered from a read sent earlier is taken, however
// recent (a GET, a miss, a LIST); admissions that begin before a read is
// sent share it.
//
// Such a read is a GET per source, one quorum read each, within the
// per-admission budget (LivePerLookup); the webhook sends a template's GETs
// at once (Reader.Prefetch), so a ConfigMap and a Secret cost one round
// trip, not two. Sources past the budget ask Versions: one metadata-only
// LIST of the namespace's sources of that kind, sent after the admission
// began, gives every resourceVersion, and a cached source at the listed
// version is current. A consistent LIST waits for the apiserver's watch
// cache to catch up, tens of milliseconds on a quiet control plane, so it
// is kept for the templates that name more sources than the budget.
//
// The LIST costs a fixed amount, whatever tenants put in their sources'
// metadata. Its pages carry every source's annotations (up to 256 KiB
// each) and managedFields, so it is not decoded: it is sent as a raw GET
// asking for metadata only, as JSON (RESTPages), and read as it arrives
// (readPage), keeping only each item's name and resourceVersion and the
// page's continue token; everything else is read past, never stored. One
// LIST holds one 32 KiB read buffer, the names it keeps (at most
// VersionsPages pages of VersionsPageSize), and what the HTTP/2 transport
// has received and not yet read (at most its 4 MiB stream window). It
// reads at most VersionsListBytes, all pages together, then stops and
// keeps the items it read whole; at most VersionsListsInFlight LISTs run
// at once, and a lookup that would start another reads with GETs instead.
// So all of them together hold under 20 MiB, where decoding pages of 500
// sources with 250 KiB of annotations each took one LIST to 566-804 MiB.
//
// Each LIST runs in its own goroutine, for at most the TTL, with the first
// caller's values but not its cancellation: a caller that gives up stops
// neither the LIST nor the others waiting for it, and the namespace is not
// remembered as listing nothing because one request's deadline came first.
package sources
