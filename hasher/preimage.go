package hasher

import (
	"cmp"
	"encoding/binary"
	"slices"
	"strings"
)

// preimageHeader separates confighash pre-images from any other use of the
// HMAC key and names the format version.
const preimageHeader = "confighash/" + Version + "\x00"

// Tag bytes of the v1 pre-image. Their values are part of the format: never
// renumber them without changing Version.
const (
	scopeAllKeys byte = 1
	scopeKeys    byte = 2

	stateAbsent  byte = 0
	statePresent byte = 1

	fieldData       byte = 1
	fieldBinaryData byte = 2
	fieldMissing    byte = 3 // a listed key the object lacks; no digest
)

// entry is one key of one source as written to the pre-image.
type entry struct {
	field  byte
	key    string
	digest Digest
}

// preimage builds the canonical byte string described in the package
// documentation. Sources must be added in canonical order.
type preimage struct {
	buf []byte
	// entries is scratch space reused across sources.
	entries []entry
}

func newPreimage(sources int) *preimage {
	p := &preimage{buf: make([]byte, 0, 256)}
	p.buf = append(p.buf, preimageHeader...)
	p.buf = binary.AppendUvarint(p.buf, uint64(sources))
	return p
}

func (p *preimage) bytes() []byte { return p.buf }

// addSource appends one source. c must be empty when !found.
func (p *preimage) addSource(ref Reference, c Content, found bool) {
	p.appendString(string(ref.Kind))
	p.appendString(ref.Name)
	if ref.AllKeys {
		p.buf = append(p.buf, scopeAllKeys)
	} else {
		p.buf = append(p.buf, scopeKeys)
	}
	if found {
		p.buf = append(p.buf, statePresent)
	} else {
		p.buf = append(p.buf, stateAbsent)
	}

	p.entries = selectEntries(p.entries[:0], ref, c)
	slices.SortFunc(p.entries, func(a, b entry) int {
		return cmp.Or(cmp.Compare(a.field, b.field), strings.Compare(a.key, b.key))
	})
	p.buf = binary.AppendUvarint(p.buf, uint64(len(p.entries)))
	for i := range p.entries {
		e := &p.entries[i]
		p.buf = append(p.buf, e.field)
		p.appendString(e.key)
		if e.field != fieldMissing {
			p.buf = append(p.buf, e.digest[:]...)
		}
	}
}

func (p *preimage) appendString(s string) {
	p.buf = binary.AppendUvarint(p.buf, uint64(len(s)))
	p.buf = append(p.buf, s...)
}

// selectEntries appends to dst the entries ref reads from c, unsorted: every
// key for a whole-object read, otherwise only the listed keys, with a
// missing entry for each listed key found in neither field.
func selectEntries(dst []entry, ref Reference, c Content) []entry {
	if ref.AllKeys {
		for k, d := range c.Data {
			dst = append(dst, entry{fieldData, k, d})
		}
		for k, d := range c.BinaryData {
			dst = append(dst, entry{fieldBinaryData, k, d})
		}
		return dst
	}
	for _, k := range ref.Keys {
		d, inData := c.Data[k]
		if inData {
			dst = append(dst, entry{fieldData, k, d})
		}
		// The API forbids a key in both fields, but Content does not, so
		// cover both rather than silently preferring one.
		b, inBinary := c.BinaryData[k]
		if inBinary {
			dst = append(dst, entry{fieldBinaryData, k, b})
		}
		if !inData && !inBinary {
			dst = append(dst, entry{field: fieldMissing, key: k})
		}
	}
	return dst
}
