package hasher

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/confighash/confighash/internal/contract"
)

// IgnoredBy reports whether a source with annotations is ignored.
func IgnoredBy(annotations map[string]string) bool {
	return annotations[contract.IgnoreAnnotation] == contract.IgnoreTrue
}

// ToggleCheck tunes StoredBeforeIgnoreToggle.
type ToggleCheck struct {
	// Toggled reports the sources whose contract.IgnoreAnnotation the caller saw
	// added or removed; they are tried first, then the sources ignored now
	// (the annotation may have been added since), then the rest. nil: none
	// known.
	Toggled func(Source) bool
	// MaxBytes bounds the pre-image bytes hashed over all the tries, so
	// that the work per check does not grow with sources × keys; 0 means
	// no bound. The first try always runs.
	MaxBytes int
}

// ToggleResult is the outcome of StoredBeforeIgnoreToggle.
type ToggleResult struct {
	// Kept is true when stored is explained by one toggled source.
	Kept bool
	// Tried is how many sources were tried flipped.
	Tried int
	// Exhausted is true when MaxBytes ran out before every source that
	// exists was tried: a toggle of a source not tried is not seen.
	Exhausted bool
}

// StoredBeforeIgnoreToggle reports whether stored is the checksum that refs
// give now except for one source whose contract.IgnoreAnnotation was added or
// removed since: the content is what it was, only whether one source
// counts has changed. Adding or removing the annotation must roll nothing
// by itself, so callers keep such a stamp until a source that counts
// changes. Only callers with a differing stamp need ask.
//
// Each source is looked up once and written into the pre-image once; a
// try then swaps that one source's part for its flipped form and hashes
// the whole again, which costs the pre-image's size. So the sources most
// likely toggled go first (check.Toggled, then those ignored now), and
// check.MaxBytes bounds the tries.
//
// An ignored source whose content changed since the annotation was added
// cannot be told apart from any other change: the stamp then holds content
// that is no longer anywhere.
func StoredBeforeIgnoreToggle(key []byte, namespace string, refs []Reference, lookup Lookup, stored string, check ToggleCheck) (ToggleResult, error) {
	if len(key) == 0 {
		return ToggleResult{}, errors.New("hasher: empty HMAC key")
	}
	// Only a stamp of this version under this key can match.
	prefix := Version + ":" + KeyID(key) + ":"
	if !strings.HasPrefix(stored, prefix) {
		return ToggleResult{}, nil
	}
	want := stored[len(prefix):]
	if len(want) != hex.EncodedLen(sha256.Size) {
		return ToggleResult{}, nil
	}
	refs = canonical(refs)
	if len(refs) == 0 {
		return ToggleResult{}, nil
	}
	if lookup == nil {
		return ToggleResult{}, errors.New("hasher: nil Lookup")
	}

	// The pre-image as Checksum writes it, cut at each source.
	pre := newPreimage(namespace, len(refs))
	head := len(pre.buf)
	ends := make([]int, len(refs))
	contents := make([]Content, len(refs))
	var order []int // the sources that exist, in the order to try them
	for i, ref := range refs {
		c, found, err := lookup(ref.Source)
		if err != nil {
			return ToggleResult{}, fmt.Errorf("hasher: look up %s: %w", ref.Source, err)
		}
		if !found {
			c = Content{}
		} else {
			order = append(order, i)
		}
		contents[i] = c
		pre.addSource(ref, c, found)
		ends[i] = len(pre.buf)
	}
	rank := make(map[int]int, len(order))
	for _, i := range order {
		switch {
		case check.Toggled != nil && check.Toggled(refs[i].Source):
			rank[i] = 0
		case contents[i].Ignored:
			rank[i] = 1
		default:
			rank[i] = 2
		}
	}
	slices.SortStableFunc(order, func(a, b int) int { return rank[a] - rank[b] })

	var (
		res     ToggleResult
		spent   int
		flipped = &preimage{}
		mac     = hmac.New(sha256.New, key)
	)
	for _, i := range order {
		start := head
		if i > 0 {
			start = ends[i-1]
		}
		flipped.buf = flipped.buf[:0]
		c := contents[i]
		c.Ignored = !c.Ignored
		flipped.addSource(refs[i], c, true)
		cost := len(pre.buf) - (ends[i] - start) + len(flipped.buf)
		if res.Tried > 0 && check.MaxBytes > 0 && spent+cost > check.MaxBytes {
			res.Exhausted = true
			return res, nil
		}
		spent += cost
		res.Tried++
		mac.Reset()
		mac.Write(pre.buf[:start])
		mac.Write(flipped.buf)
		mac.Write(pre.buf[ends[i]:])
		if hex.EncodeToString(mac.Sum(nil)) == want {
			res.Kept = true
			return res, nil
		}
	}
	return res, nil
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
