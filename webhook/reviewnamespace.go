package webhook

import (
	"encoding/json"
	"io"
)

// namespacePeekBytes is how much of a body reviewNamespace reads. The
// apiserver writes request.namespace ahead of the objects, within the
// first kilobyte; a caller that puts it later, or hides it behind large
// fields, is queued under "" instead, at a bounded cost.
const namespacePeekBytes = 16 << 10

// reviewNamespace is the request.namespace of an AdmissionReview, read
// from the start of its body before the request waits for a slot (the
// slots are shared fairly across namespaces); "" when it is not found
// within namespacePeekBytes, ahead of the request's objects.
func reviewNamespace(body io.Reader) string {
	dec := json.NewDecoder(io.LimitReader(body, namespacePeekBytes))
	if !openObject(dec) {
		return ""
	}
	for {
		key, ok := nextKey(dec)
		if !ok {
			return ""
		}
		if key != "request" {
			if !skipValue(dec) {
				return ""
			}
			continue
		}
		if !openObject(dec) {
			return ""
		}
		for {
			key, ok := nextKey(dec)
			switch {
			case !ok, key == "object", key == "oldObject":
				return ""
			case key == "namespace":
				tok, err := dec.Token()
				if s, isString := tok.(string); err == nil && isString {
					return s
				}
				return ""
			}
			if !skipValue(dec) {
				return ""
			}
		}
	}
}

// openObject reads a '{'.
func openObject(dec *json.Decoder) bool {
	tok, err := dec.Token()
	d, ok := tok.(json.Delim)
	return err == nil && ok && d == '{'
}

// nextKey reads the next key of the object being read; false at its end
// or on anything else.
func nextKey(dec *json.Decoder) (string, bool) {
	tok, err := dec.Token()
	key, ok := tok.(string)
	return key, err == nil && ok
}

// skipValue reads one value, however nested.
func skipValue(dec *json.Decoder) bool {
	depth := 0
	for {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		if d, ok := tok.(json.Delim); ok {
			switch d {
			case '{', '[':
				depth++
			default:
				depth--
			}
		}
		if depth == 0 {
			return true
		}
	}
}
