package pinning

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"slices"
	"strings"

	"github.com/confighash/confighash/hasher"
)

// nameDomain begins every snapshot name's pre-image. It keeps these MACs
// apart from the checksum's ("confighash/v2\x00"), the records' and the
// stamp seals' under the same key.
const nameDomain = "confighash.dev/snapshot/v1\x00"

// nameInfix joins the source's name and the digest in a snapshot's name.
const nameInfix = "-pin-"

// digestHexLen is how much of the name MAC a name carries: 80 bits, enough
// that no two contents of one source meet by chance.
const digestHexLen = 20

// maxNameLen is the longest ConfigMap or Secret name (a DNS subdomain).
const maxNameLen = 253

// Field tags of the name's pre-image entries; they also fix the order.
const (
	fieldData       byte = 1
	fieldBinaryData byte = 2
)

// Select keeps of c what ref reads: every key when the whole source is
// read, else the listed keys the source has; binaryData only when something
// other than env reads a ConfigMap (hasher.Reference.EnvOnly). The copy
// holds exactly that, so a key nobody reads never reaches a snapshot.
func Select(ref hasher.Reference, c hasher.Content) hasher.Content {
	out := hasher.Content{Data: selectKeys(ref, c.Data)}
	if !ref.EnvOnly {
		out.BinaryData = selectKeys(ref, c.BinaryData)
	}
	return out
}

// reads reports whether ref reads key.
func reads(ref hasher.Reference, key string) bool {
	if ref.AllKeys {
		return true
	}
	_, ok := slices.BinarySearch(ref.Keys, key)
	return ok
}

func selectKeys[V any](ref hasher.Reference, m map[string]V) map[string]V {
	var out map[string]V
	for k, v := range m {
		if !reads(ref, k) {
			continue
		}
		if out == nil {
			out = make(map[string]V)
		}
		out[k] = v
	}
	return out
}

// Name is the name of the snapshot of src in namespace holding exactly c
// (already Selected); c's Ignored is not part of it, only the digests. It is a function of the content, under the key: the
// same content always gets the same name, and other content another one,
// which matters because the kubelet never re-reads an immutable object.
func Name(key []byte, namespace string, src hasher.Source, c hasher.Content) string {
	m := hmac.New(sha256.New, key)
	m.Write(namePreimage(namespace, src, c))
	sum := hex.EncodeToString(m.Sum(nil))[:digestHexLen]
	return nameBase(src.Name) + nameInfix + sum
}

// namePreimage is length-prefixed throughout, entries sorted by field then
// key, so two different inputs never give one pre-image.
func namePreimage(namespace string, src hasher.Source, c hasher.Content) []byte {
	b := make([]byte, 0, 128+(len(c.Data)+len(c.BinaryData))*(sha256.Size+32))
	b = append(b, nameDomain...)
	b = appendString(b, namespace)
	b = appendString(b, string(src.Kind))
	b = appendString(b, src.Name)
	b = binary.AppendUvarint(b, uint64(len(c.Data)+len(c.BinaryData)))
	b = appendEntries(b, fieldData, c.Data)
	return appendEntries(b, fieldBinaryData, c.BinaryData)
}

func appendEntries(b []byte, field byte, m map[string]hasher.Digest) []byte {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		d := m[k]
		b = append(b, field)
		b = appendString(b, k)
		b = append(b, d[:]...)
	}
	return b
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// nameBase is the source's name cut so that the whole name fits, without a
// trailing '-' or '.', which a DNS subdomain may not have before the infix.
func nameBase(source string) string {
	limit := maxNameLen - len(nameInfix) - digestHexLen
	if len(source) > limit {
		source = source[:limit]
	}
	return strings.TrimRight(source, "-.")
}
