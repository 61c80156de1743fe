package workload

// MaxSources bounds how many ConfigMaps and Secrets one pod template may
// read and still be stamped, by the webhook and by the hook alike. ReadsOf
// applies it (SkipOverLimit) for both, so that they agree: a template over
// the bound left alone by one and re-stamped (and rolled) by the other would
// roll for nothing. Real workloads read a handful; the bound keeps a
// pathological object from holding an admission call (and its timeout)
// hostage to hundreds of lookups, and the hook's readers index from growing
// by an entry per name such an object invents.
const MaxSources = 256

// MaxReferenceBytes bounds the size of what one pod template reads, as
// referenceBytes counts it: the names and keys of its references and its
// include and exclude annotations, each name and key counted with
// entryCost on top. ReadsOf applies it with MaxSources (SkipOverLimit),
// so that the webhook and the hook still agree; the hook's cache holds a
// workload's references (SlimObject), and this is what bounds them. Real
// templates read a few hundred bytes' worth; 16 KiB is some 300 keys of
// 20-byte names.
const MaxReferenceBytes = 16 << 10

// entryCost is what referenceBytes adds per name and per key: a key of one
// byte still costs a struct in the cache, so that many tiny keys cannot
// slip under the byte bound.
const entryCost = 32
