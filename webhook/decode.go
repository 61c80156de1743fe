package webhook

import (
	"bytes"

	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	kjson "sigs.k8s.io/json"

	"github.com/confighash/confighash/workload"
)

// decode decodes an object of the request, of kind, as h.Decoder does,
// without its first pass over the JSON. The deserializer behind
// Decoder.DecodeRaw reads the whole object once with encoding/json to learn
// its apiVersion and kind, then again to decode it into the kind's type.
// What the apiserver sends carries both, as they are: decoded once, an
// object whose own apiVersion and kind are the kind's is what the
// deserializer makes of it, the same unmarshalling into the same type.
// Anything else goes to the Decoder, into a fresh object, and is answered
// as it always was: another or no apiVersion or kind, JSON that does not
// decode, a custom kind (unstructured), and any object in which a key could
// match "apiVersion" or "kind" for encoding/json, which ignores case (and
// folds some non-ASCII letters), and not for this decoding, which does not.
func (h *Handler) decode(kind workload.Kind, raw runtime.RawExtension) (client.Object, error) {
	obj := kind.New()
	if _, custom := obj.(runtime.Unstructured); !custom && len(raw.Raw) > 0 && plainTypeKeys(raw.Raw) &&
		kjson.UnmarshalCaseSensitivePreserveInts(raw.Raw, obj) == nil &&
		obj.GetObjectKind().GroupVersionKind() == kind.GVK {
		return obj, nil
	}
	obj = kind.New()
	return obj, h.Decoder.DecodeRaw(raw, obj)
}

// plainTypeKeys reports whether data can hold "apiVersion" and "kind" only
// as spelt: it is ASCII without \u escapes, and every string that equals
// one of them ignoring case equals it exactly.
func plainTypeKeys(data []byte) bool {
	for _, b := range data {
		if b >= 0x80 {
			return false
		}
	}
	return !bytes.Contains(data, []byte(`\u`)) &&
		countFold(data, `"kind"`) == bytes.Count(data, []byte(`"kind"`)) &&
		countFold(data, `"apiversion"`) == bytes.Count(data, []byte(`"apiVersion"`))
}

// countFold counts the places in data that begin with a quote and read
// quoted, ASCII case ignored.
func countFold(data []byte, quoted string) int {
	n := 0
	for i := 0; i+len(quoted) <= len(data); i++ {
		next := bytes.IndexByte(data[i:], '"')
		if next < 0 || i+next+len(quoted) > len(data) {
			break
		}
		i += next
		if bytes.EqualFold(data[i:i+len(quoted)], []byte(quoted)) {
			n++
		}
	}
	return n
}
