package hasher

import (
	"encoding/binary"
	"slices"
)

// preimageHeader separates confighash pre-images from any other use of the
// HMAC key and names the format version.
const preimageHeader = "confighash/" + Version + "\x00"

// Tag bytes of the pre-image (the same in v1 and v2). Their values are part
// of the format: never renumber them without changing Version.
const (
	scopeAllKeys byte = 1
	scopeKeys    byte = 2

	stateAbsent  byte = 0
	statePresent byte = 1
	// stateIgnored is a source that exists and carries contract.IgnoreAnnotation; no
	// entry count and no entries follow. v2 only: v1 has no such state.
	stateIgnored byte = 2

	// Entries are ordered by field first, so these values also fix the order.
	fieldData       byte = 1
	fieldBinaryData byte = 2
	fieldMissing    byte = 3 // a listed key the object lacks; carries no digest
)

// preimage builds the canonical byte string described in the package
// documentation, one source at a time.
type preimage struct {
	buf []byte
	// keys is scratch space for sorting map keys, reused across sources.
	keys []string
}

// newPreimage starts a pre-image of the current version for sources read in
// namespace. The namespace follows the header, length-prefixed like every
// other string, so that no namespace/name split can be confused with another.
func newPreimage(namespace string, sources int) *preimage {
	p := &preimage{buf: make([]byte, 0, 1024)}
	p.buf = append(p.buf, preimageHeader...)
	p.appendString(namespace)
	p.buf = binary.AppendUvarint(p.buf, uint64(sources)) //nolint:gosec // a count of sources, never negative
	return p
}

func (p *preimage) bytes() []byte { return p.buf }

// addSource appends one source and the entries ref reads from c. Sources must
// be added in canonical order and ref must be canonical (keys sorted and
// unique), as canonical returns them. c must be empty when !found.
func (p *preimage) addSource(ref Reference, c Content, found bool) {
	p.appendString(string(ref.Kind))
	p.appendString(ref.Name)
	if ref.AllKeys {
		p.buf = append(p.buf, scopeAllKeys)
	} else {
		p.buf = append(p.buf, scopeKeys)
	}
	switch {
	case found && c.Ignored:
		// A fixed marker rather than nothing: the source stays in the
		// count and its place, so ignoring it is one defined pre-image,
		// and a stamp never depends on content its owner said to ignore.
		p.buf = append(p.buf, stateIgnored)
		return
	case found:
		p.buf = append(p.buf, statePresent)
	default:
		p.buf = append(p.buf, stateAbsent)
	}
	if ref.EnvOnly {
		// What an env-only reader reads is the ConfigMap without its
		// binaryData, and it is encoded exactly as such a ConfigMap: a
		// listed key found only there is missing, as the kubelet finds it.
		// The bytes say what the pods read, so they stay unambiguous, and
		// for a ConfigMap without binaryData they are what they always were.
		c.BinaryData = nil
	}

	if ref.AllKeys {
		p.buf = binary.AppendUvarint(p.buf, uint64(len(c.Data)+len(c.BinaryData)))
		p.appendMap(fieldData, c.Data)
		p.appendMap(fieldBinaryData, c.BinaryData)
		return
	}
	p.appendKeys(ref.Keys, c)
}

// appendMap appends every entry of m, sorted by key.
func (p *preimage) appendMap(field byte, m map[string]Digest) {
	p.keys = p.keys[:0]
	for k := range m {
		p.keys = append(p.keys, k)
	}
	slices.Sort(p.keys)
	for _, k := range p.keys {
		p.appendEntry(field, k, m[k])
	}
}

// appendKeys appends the entries for a key-list read: each listed key found
// in data, then each found in binaryData, then each found in neither as a
// missing entry. keys is sorted, so walking it once per field gives (field,
// key) order without sorting. The API forbids a key in both fields, but
// Content does not, so both are covered rather than one silently preferred.
func (p *preimage) appendKeys(keys []string, c Content) {
	// Every key yields exactly one entry, except a key in both fields.
	n := len(keys)
	for _, k := range keys {
		_, inData := c.Data[k]
		_, inBinary := c.BinaryData[k]
		if inData && inBinary {
			n++
		}
	}
	p.buf = binary.AppendUvarint(p.buf, uint64(n))

	for _, k := range keys {
		if d, ok := c.Data[k]; ok {
			p.appendEntry(fieldData, k, d)
		}
	}
	for _, k := range keys {
		if d, ok := c.BinaryData[k]; ok {
			p.appendEntry(fieldBinaryData, k, d)
		}
	}
	for _, k := range keys {
		_, inData := c.Data[k]
		_, inBinary := c.BinaryData[k]
		if !inData && !inBinary {
			p.buf = append(p.buf, fieldMissing)
			p.appendString(k)
		}
	}
}

func (p *preimage) appendEntry(field byte, key string, d Digest) {
	p.buf = append(p.buf, field)
	p.appendString(key)
	p.buf = append(p.buf, d[:]...)
}

func (p *preimage) appendString(s string) {
	p.buf = binary.AppendUvarint(p.buf, uint64(len(s)))
	p.buf = append(p.buf, s...)
}
