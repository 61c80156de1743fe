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
