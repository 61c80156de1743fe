package hasher

import (
	"slices"
)

// refSet merges reads of the same source into one Reference, applying the
// merge rules in one place for both References and Checksum: a whole-object
// read wins over key lists, key lists union, and Optional and EnvOnly are
// the AND of all reads.
type refSet struct {
	index map[Source]int
	refs  []Reference
}

// newRefSet returns an empty set with room for about size sources.
func newRefSet(size int) *refSet {
	return &refSet{index: make(map[Source]int, size), refs: make([]Reference, 0, size)}
}

// read is how one place in a pod spec reads a source.
type read struct {
	// optional: the pod starts without the source.
	optional bool
	// envOnly: an env var or envFrom of a ConfigMap, which reads data only.
	envOnly bool
}

// addWhole records a read of the whole object.
func (s *refSet) addWhole(src Source, how read) {
	r := s.ref(src, how)
	r.AllKeys = true
	// Keys are meaningless once everything is read; drop them early so a
	// later key-list read of the same source does not grow them again.
	r.Keys = nil
}

// addKeys records a read of the given keys only. With no keys it still
// records the source, so a caller's empty key list is not lost.
func (s *refSet) addKeys(src Source, how read, keys ...string) {
	r := s.ref(src, how)
	if !r.AllKeys {
		r.Keys = append(r.Keys, keys...)
	}
}

// ref returns the entry for src, creating it on first use, with how folded
// into its Optional and EnvOnly flags.
func (s *refSet) ref(src Source, how read) *Reference {
	i, ok := s.index[src]
	if !ok {
		i = len(s.refs)
		s.index[src] = i
		s.refs = append(s.refs, Reference{Source: src, Optional: true, EnvOnly: true})
	}
	r := &s.refs[i]
	r.Optional = r.Optional && how.optional
	r.EnvOnly = r.EnvOnly && how.envOnly
	return r
}

// list returns the merged references in canonical form: sorted by source,
// keys sorted and unique. The set must not be used afterwards.
func (s *refSet) list() []Reference {
	for i := range s.refs {
		r := &s.refs[i]
		slices.Sort(r.Keys)
		r.Keys = slices.Compact(r.Keys)
	}
	slices.SortFunc(s.refs, func(a, b Reference) int {
		return compareSources(a.Source, b.Source)
	})
	return s.refs
}
