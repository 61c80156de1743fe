// Package hasher computes the confighash checksum: a keyed digest of the
// ConfigMap and Secret content that a pod template reads. The webhook and
// controller stamp it into the template annotation confighash.dev/checksum,
// so a change to that content changes the template and rolls the workload.
//
// The package is pure: it has no API client, does no I/O and takes no
// context. References says what a PodSpec reads; callers fetch the content
// and hand it to Checksum through a Lookup.
//
// # What counts as read
//
// env valueFrom key refs (one key), envFrom (whole object), and configMap and
// secret volumes and projected volume sources (whole object, or only the keys
// listed in items), in containers and init containers. Things that are not
// workload configuration, such as imagePullSecrets or service account token
// projections, are ignored. The confighash.dev/include and
// confighash.dev/exclude annotations add or drop whole sources by hand; an
// included source is optional (see contract.IncludeAnnotation).
//
// The kubelet builds env from a ConfigMap's data alone: a ConfigMap that
// only env valueFrom and envFrom read (Reference.EnvOnly) contributes no
// binaryData, so a binaryData-only change rolls only the workloads that
// mount it. One volume or projection of it, or the include annotation,
// counts its binaryData again.
//
// # Pre-image
//
// The checksum is computed over a canonical byte string, the pre-image:
//
//	preimage = "confighash/v2\x00" str(namespace) uvarint(#sources) source...
//	source   = str(kind) str(name) scope state uvarint(#entries) entry...
//	entry    = field str(key) [digest]
//	str(s)   = uvarint(len(s)) s
//
// scope is 1 for a whole-object read and 2 for a key list; state is 0 when
// the source does not exist, 1 when it does and 2 when it exists and carries
// contract.IgnoreAnnotation (then nothing follows: no entry count, no entries, so its
// content never reaches the checksum); field is 1 for data, 2 for
// binaryData and 3 for a listed key the object does not have, which carries
// no digest. A digest is the 32-byte SHA-256 of one value. Sources are sorted
// by kind then name and entries by field then key, so the order in which
// refs, keys or map entries arrive never matters.
//
// Every variable-length field is length-prefixed and every list is preceded
// by its count, so the encoding can be parsed back unambiguously and two
// different inputs never produce the same bytes. Joining "k=v;" pairs would
// not have that property: {"a": "b;c=d"} and {"a": "b", "c": "d"} would
// collide, and an edit could go unnoticed.
//
// For an EnvOnly reader the pre-image is exactly that of the same ConfigMap
// without binaryData: it encodes what the pods read, so it stays
// unambiguous, and for a ConfigMap without binaryData it is byte for byte
// what it was before EnvOnly existed. That is why this came without a new
// Version: the only v2 stamps it changes are those of env-only readers of
// ConfigMaps that have binaryData, which roll once after the upgrade.
//
// Only what is read is covered. For a key-list read, keys that are not listed
// are left out, so editing them does not roll the workload; a listed key that
// the object lacks is written as an explicit missing entry, so that adding it
// later does. A source that does not exist (state 0) encodes differently from
// one that exists but is empty, because kubelet treats them differently.
//
// # Why the checksum is keyed
//
// The stamp is stored in the pod template, where anyone allowed to read
// Deployments can see it; that is usually a much wider audience than the one
// allowed to read Secrets. A plain hash of Secret values would be an offline
// oracle: guess a password, hash the guess, compare with the stamp. The
// checksum is therefore HMAC-SHA256 of the pre-image under a key that only
// confighash holds, which makes the stamp useless for that without the key.
// The unkeyed per-value digests inside the pre-image never leave the process.
//
// One key serves the whole cluster, so the namespace is part of the
// pre-image: otherwise a user allowed to create Secrets in one namespace
// could create one with the same name and a guessed value, dry-run a
// Deployment that reads it, and compare its stamp with one in another
// namespace. v1 lacked this; see Versioning.
//
// The stamp carries KeyID(key), so a stamp made under another key (the key
// Secret was lost or rotated) is told apart from a content change by Compare,
// and callers keep it rather than roll every workload at once.
//
// # Versioning
//
// A checksum is Version, a colon, the key ID, a colon, and the lowercase hex
// HMAC: "v2:" + 16 hex + ":" + 64 hex. Any change to the pre-image must come
// with a new Version; the golden vectors in testdata/golden.json exist to
// catch a change that was not.
//
// Stamps of the previous version ("v1:" + 64 hex) are not compared with
// anything: Compare calls them Differs, like any stamp not of the current
// format, so a workload that still carries one is re-stamped, and rolls,
// once. Until this release a v1 stamp that still matched was kept; that
// comparison was an oracle. v1 does not bind the namespace, and nobody can
// tell confighash's own v1 stamps from copied ones: a stored stamp may have
// been written while the webhook was not called (namespace unlabelled,
// workload opted out), and a review POSTed to the webhook carries whatever
// old object its caller wrote. With a v1 stamp copied from another
// namespace and a same-named Secret holding a guess, "still current" meant
// "right guess".
//
// A later version may keep v2 stamps across its upgrade by comparing them
// with the v2 computation: v2 binds the namespace and the key, so a copied
// v2 stamp matches only content of its own namespace.
package hasher
