package webhook

import (
	"bytes"

	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	kjson "sigs.k8s.io/json"

	"github.com/confighash/confighash/internal/workload"
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
// as spelt: it is ASCII without \u escapes, and every string that reads
// one of them, ignoring case, reads it exactly. One pass, no allocation.
func plainTypeKeys(data []byte) bool {
	for i, b := range data {
		switch {
		case b >= 0x80:
			return false
		case b == '\\' && i+1 < len(data) && data[i+1] == 'u':
			return false
		case b == '"':
			rest := data[i+1:]
			for _, key := range [...]string{`kind"`, `apiVersion"`} {
				if len(rest) >= len(key) && bytes.EqualFold(rest[:len(key)], []byte(key)) && string(rest[:len(key)]) != key {
					return false
				}
			}
		}
	}
	return true
}
