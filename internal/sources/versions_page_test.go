package sources

import (
	"bufio"
	"errors"
	"io"
	"maps"
	"strings"
	"testing"
)

// TestReadPage: readPage finds each item's name and resourceVersion and
// the page's continue token wherever they are among other fields, through
// escapes, nulls and values of any size, whatever its buffer's size; a
// page cut short keeps the items read whole.
func TestReadPage(t *testing.T) {
	long := strings.Repeat(`\\\"x`, 5000) // escapes across every buffer boundary
	// Runs of backslashes, even and odd, ending a buffer at every offset.
	var runs strings.Builder
	for k := range 40 {
		runs.WriteString(`"` + strings.Repeat(`\\`, k) + `\"]}",`)
	}
	cases := []struct {
		name, page string
		found      map[string]string
		cont       string
		fails      bool
	}{
		{name: "empty", page: `{"metadata":{},"items":[]}`, found: map[string]string{}},
		{name: "null items", page: `{"items":null,"metadata":null}`, found: map[string]string{}},
		{
			name: "fields in any order",
			page: ` { "items" : [ {"metadata":{"annotations":{"a":"` + long + `","b":"\\"},"resourceVersion":"7","name":"a"},"kind":"x"} ,
				{"kind":"PartialObjectMetadata","metadata":{"name":"b","labels":null,"generation":3,"deletionGracePeriodSeconds":-1.5e3,"finalizers":["f"],"resourceVersion":"8","managedFields":[{"fieldsV1":{"f:data":{"f:\"}":{}}}}]}} ] ,
				"metadata":{"resourceVersion":"9","continue":"c\/1"} }`,
			found: map[string]string{"a": "7", "b": "8"},
			cont:  "c/1",
		},
		{name: "backslash runs", page: `{"items":[{"metadata":{"finalizers":[` + runs.String() + `""],"name":"a","resourceVersion":"1"}}]}`, found: map[string]string{"a": "1"}},
		{name: "escaped name", page: `{"items":[{"metadata":{"name":"\u0061b","resourceVersion":"1"}}]}`, found: map[string]string{"ab": "1"}},
		{name: "a key longer than any compared", page: `{"items":[{"metadata":{"` + strings.Repeat("n", 100) + `":"x","name":"a","resourceVersion":"1"}}]}`, found: map[string]string{"a": "1"}},
		{name: "no version", page: `{"items":[{"metadata":{"name":"a"}},{"metadata":{"name":"b","resourceVersion":"2"}}]}`, found: map[string]string{"b": "2"}},
		{name: "a name too long", page: `{"items":[{"metadata":{"name":"a","resourceVersion":"1"}},{"metadata":{"name":"` + strings.Repeat("n", versionsTextMax+1) + `","resourceVersion":"2"}}]}`, found: map[string]string{"a": "1"}, fails: true},
		{name: "cut within an item", page: `{"metadata":{"continue":"c"},"items":[{"metadata":{"name":"a","resourceVersion":"1"}},{"metadata":{"name":"b","resourceVersion":"2","annotations":{"a":"xx`, found: map[string]string{"a": "1"}, cont: "c", fails: true},
		{name: "not JSON", page: `<html>`, found: map[string]string{}, fails: true},
	}
	for _, c := range cases {
		for _, size := range []int{16, 17, 4096} { // 17: a full buffer of backslashes is an odd run
			found := map[string]string{}
			cont, err := readPage(bufio.NewReaderSize(strings.NewReader(c.page), size), found)
			if (err != nil) != c.fails || cont != c.cont || !maps.Equal(found, c.found) {
				t.Errorf("%s (buffer %d): found %v, continue %q, %v; want %v, %q, failing %v", c.name, size, found, cont, err, c.found, c.cont, c.fails)
			}
		}
	}
}

// TestBudget: the budget gives at most its bytes, then fails with
// errListBudget, which ends readPage.
func TestBudget(t *testing.T) {
	page := `{"items":[{"metadata":{"name":"a","resourceVersion":"1"}},{"metadata":{"name":"b","resourceVersion":"2"}}]}`
	cut := strings.Index(page, `{"metadata":{"name":"b"`)
	b := &budget{r: strings.NewReader(page), left: int64(cut + 10)}
	found := map[string]string{}
	_, err := readPage(bufio.NewReaderSize(b, 16), found)
	if !errors.Is(err, errListBudget) {
		t.Errorf("readPage past the budget: %v, want errListBudget", err)
	}
	if !maps.Equal(found, map[string]string{"a": "1"}) {
		t.Errorf("found %v, want a only", found)
	}
	if rest, _ := io.ReadAll(b.r); len(rest) != len(page)-cut-10 {
		t.Errorf("%d bytes read, want the budget's %d", len(page)-len(rest), cut+10)
	}
}
