package preview

import (
	"slices"

	"github.com/confighash/confighash/hasher"
)

// Change says how one key changes.
type Change string

// The changes of a key.
const (
	Added   Change = "added"
	Removed Change = "removed"
	Changed Change = "changed"
)

// KeyChange is one key of the source whose value changes: its name and how,
// never a value or a digest.
type KeyChange struct {
	Key    string `json:"key"`
	Change Change `json:"change"`
}

// entry is one key's digest and the field it is in (data or binaryData):
// a key moved from one to the other changes what a volume holds.
type entry struct {
	binary bool
	digest hasher.Digest
}

func entryOf(c hasher.Content, key string) (entry, bool) {
	if d, ok := c.Data[key]; ok {
		return entry{digest: d}, true
	}
	if d, ok := c.BinaryData[key]; ok {
		return entry{binary: true, digest: d}, true
	}
	return entry{}, false
}

// diffKeys lists, sorted, the keys ref reads whose value differs between
// before and after: for a whole-object read every key of either, for a key
// list the listed ones. An env-only reader of a ConfigMap reads no
// binaryData, as the hasher encodes it. Content of a source that does not
// exist is empty, so creating it adds every key it has that is read.
func diffKeys(before, after hasher.Content, ref hasher.Reference) []KeyChange {
	if ref.EnvOnly {
		before.BinaryData, after.BinaryData = nil, nil
	}
	keys := ref.Keys
	if ref.AllKeys {
		keys = allKeys(before, after)
	}
	var out []KeyChange
	for _, k := range keys {
		b, inBefore := entryOf(before, k)
		a, inAfter := entryOf(after, k)
		switch {
		case !inBefore && inAfter:
			out = append(out, KeyChange{k, Added})
		case inBefore && !inAfter:
			out = append(out, KeyChange{k, Removed})
		case inBefore && b != a:
			out = append(out, KeyChange{k, Changed})
		}
	}
	return out
}

// allKeys is every key of data and binaryData of either content, sorted.
func allKeys(cs ...hasher.Content) []string {
	var keys []string
	for _, c := range cs {
		for k := range c.Data {
			keys = append(keys, k)
		}
		for k := range c.BinaryData {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return slices.Compact(keys)
}
