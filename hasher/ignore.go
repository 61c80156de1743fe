package hasher

import "fmt"

// IgnoreAnnotation set to "true" on a ConfigMap or Secret keeps its content
// out of every checksum: in the v2 pre-image the source is written as
// ignored (state 2) with no entries, so its changes never change a stamp.
// It is for sources that change without mattering to their readers: one an
// operator rewrites with a timestamp, one a sidecar reloads on its own.
// Users set it on the source; confighash only reads it. Exactly "true"
// counts, like the other confighash switches, so a typo never silently
// widens what is left out.
const IgnoreAnnotation = "confighash.dev/ignore"

// IgnoreTrue is the value of IgnoreAnnotation that ignores a source.
const IgnoreTrue = "true"

// IgnoredBy reports whether a source with annotations is ignored.
func IgnoredBy(annotations map[string]string) bool {
	return annotations[IgnoreAnnotation] == IgnoreTrue
}

// StoredBeforeIgnoreToggle reports whether stored is the checksum that refs
// give now except for one source whose IgnoreAnnotation was added or
// removed since: the content is what it was, only whether one source
// counts has changed. Adding or removing the annotation must roll nothing
// by itself, so callers keep such a stamp until a source that counts
// changes. It computes one checksum per source that exists, and only
// callers with a differing stamp need ask.
//
// An ignored source whose content changed since the annotation was added
// cannot be told apart from any other change: the stamp then holds content
// that is no longer anywhere.
func StoredBeforeIgnoreToggle(key []byte, namespace string, refs []Reference, lookup Lookup, stored string) (bool, error) {
	if stored == "" {
		return false, nil
	}
	for _, ref := range canonical(refs) {
		_, found, err := lookup(ref.Source)
		if err != nil {
			return false, fmt.Errorf("hasher: look up %s: %w", ref.Source, err)
		}
		if !found {
			continue
		}
		flipped := ref.Source
		res, err := Checksum(key, namespace, refs, func(s Source) (Content, bool, error) {
			c, found, err := lookup(s)
			if s == flipped {
				c.Ignored = !c.Ignored
			}
			return c, found, err
		})
		if err != nil {
			return false, err
		}
		if res.Checksum == stored {
			return true, nil
		}
	}
	return false, nil
}

// ReadsIgnored reports whether any source refs read exists and is ignored.
func ReadsIgnored(refs []Reference, lookup Lookup) (bool, error) {
	for _, ref := range refs {
		c, found, err := lookup(ref.Source)
		if err != nil {
			return false, fmt.Errorf("hasher: look up %s: %w", ref.Source, err)
		}
		if found && c.Ignored {
			return true, nil
		}
	}
	return false, nil
}
