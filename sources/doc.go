// Package sources is how confighash holds and reads ConfigMaps and Secrets.
//
// The informer cache keeps them slimmed: every value is replaced by its
// SHA-256 digest, and metadata that can carry values (annotations such as
// kubectl's last-applied-configuration, managedFields) is dropped. Memory
// therefore grows with the number of keys, not with Secret bytes, and no
// Secret value stays in the process. The webhook and the config-update hook
// read the same cache, so they compute the same checksum.
//
// Everything that hashes goes through Slim first, the cache and the live
// fallback alike, so there is exactly one way from an object to
// hasher.Content.
//
// Live reads are bounded per admission (Reader) and remembered for two
// seconds, misses and finds alike (Misses, RecentReads), so names the cache
// lacks cost one GET per name and TTL whoever sends them.
package sources
