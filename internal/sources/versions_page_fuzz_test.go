package sources

import (
	"bufio"
	"bytes"
	"encoding/json"
	"maps"
	"testing"
)

// FuzzReadPage: on any valid JSON that readPage reads without an error,
// it finds what encoding/json's tokens find (an item's name and
// resourceVersion once its metadata object has been read whole, and the
// list's continue token), whatever its buffer's size. Its seeds run with
// the unit tests.
func FuzzReadPage(f *testing.F) {
	f.Add([]byte(`{"metadata":{"continue":"c"},"items":[{"metadata":{"name":"a","resourceVersion":"1","annotations":{"x":"\\\"}"}}}]}`), uint8(0))
	f.Add([]byte(`{"items":[{"metadata":{"finalizers":["\\\\\\\"]}",""],"n\u0061me":"a","resourceVersion":"1"}},{"metadata":null}]}`), uint8(1))
	f.Add([]byte(`{"items":null,"kind":1e3,"x":[true,false,null,{"a":[]}]}`), uint8(7))
	f.Fuzz(func(t *testing.T, page []byte, extra uint8) {
		if !json.Valid(page) {
			return
		}
		found := map[string]string{}
		cont, err := readPage(bufio.NewReaderSize(bytes.NewReader(page), 16+int(extra)), found)
		if err != nil {
			return
		}
		wantFound, wantCont, ok := tokensOf(page)
		if !ok {
			t.Fatalf("readPage read %q, which encoding/json cannot walk", page)
		}
		if cont != wantCont || !maps.Equal(found, wantFound) {
			t.Fatalf("readPage(%q): %v, continue %q; encoding/json: %v, %q", page, found, cont, wantFound, wantCont)
		}
	})
}

// tokensOf walks page with encoding/json's tokens for what readPage looks
// for; ok is false where the page is not shaped as readPage reads it.
func tokensOf(page []byte) (found map[string]string, cont string, ok bool) {
	d := json.NewDecoder(bytes.NewReader(page))
	found = map[string]string{}
	ok = walkObject(d, func(key string) bool {
		switch key {
		case "metadata":
			return walkObject(d, func(key string) bool {
				if key != "continue" {
					return skipValue(d)
				}
				return stringValue(d, &cont)
			})
		case "items":
			return walkArray(d, func() bool {
				return walkObject(d, func(key string) bool {
					if key != "metadata" {
						return skipValue(d)
					}
					var name, rv string
					done := walkObject(d, func(key string) bool {
						switch key {
						case "name":
							return stringValue(d, &name)
						case "resourceVersion":
							return stringValue(d, &rv)
						}
						return skipValue(d)
					})
					if done && name != "" && rv != "" {
						found[name] = rv
					}
					return done
				})
			})
		}
		return skipValue(d)
	})
	return found, cont, ok
}

func walkObject(d *json.Decoder, member func(string) bool) bool {
	return walk(d, json.Delim('{'), func() bool {
		k, err := d.Token()
		key, isKey := k.(string)
		return err == nil && isKey && member(key)
	})
}

func walkArray(d *json.Decoder, elem func() bool) bool {
	return walk(d, json.Delim('['), elem)
}

func walk(d *json.Decoder, open json.Delim, each func() bool) bool {
	t, err := d.Token()
	if err != nil {
		return false
	}
	if t == nil {
		return true
	}
	if t != open {
		return false
	}
	for d.More() {
		if !each() {
			return false
		}
	}
	_, err = d.Token()
	return err == nil
}

func stringValue(d *json.Decoder, out *string) bool {
	t, err := d.Token()
	s, ok := t.(string)
	*out = s
	return err == nil && ok
}

func skipValue(d *json.Decoder) bool {
	var v json.RawMessage
	return d.Decode(&v) == nil
}
