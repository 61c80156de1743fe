package mdtable

import (
	"slices"
	"testing"
)

const doc = `# Title

## Series
Some text.

| name | type |
|---|---|
| ` + "`a`" + ` | counter |
| b \| c | gauge |

Between.

| other | x |
| --- | --- |
| 1 | 2 |
### Sub
| in sub | y |
|:-:|--|
| 3 | 4 |

## Next
| not | ours |
|---|---|
| 5 | 6 |
`

func TestSection(t *testing.T) {
	body, ok := Section(doc, "## Series")
	if !ok {
		t.Fatal("no ## Series")
	}
	tables := Tables(body)
	var headers []string
	for _, tb := range tables {
		headers = append(headers, tb.Header)
	}
	if want := []string{"| name | type |", "| other | x |", "| in sub | y |"}; !slices.Equal(headers, want) {
		t.Fatalf("headers %q, want %q (the section ends at the next ## heading, not at ###)", headers, want)
	}
	if got := tables[0].Rows; len(got) != 2 || !slices.Equal(got[0], []string{"`a`", "counter"}) || !slices.Equal(got[1], []string{"b | c", "gauge"}) {
		t.Errorf("rows %q", got)
	}
	if got := tables[2].Rows; len(got) != 1 || !slices.Equal(got[0], []string{"3", "4"}) {
		t.Errorf("rows %q", got)
	}
	if _, ok := Section(doc, "## Missing"); ok {
		t.Error("found a section that is not there")
	}
	if _, ok := Section(doc, "## Serie"); ok {
		t.Error("a heading matched by its prefix")
	}
	if body, ok := Section("## Next\n| a |\n", "## Next"); !ok || len(Tables(body)) != 1 {
		t.Errorf("a section on the first line: %q, %v", body, ok)
	}
}

func TestCells(t *testing.T) {
	for in, want := range map[string][]string{
		"| a | b |":      {"a", "b"},
		"|a|b":           {"a", "b"},
		`| x \| y | z |`: {"x | y", "z"},
		"| | |":          {"", ""},
	} {
		if got := Cells(in); !slices.Equal(got, want) {
			t.Errorf("Cells(%q) = %q, want %q", in, got, want)
		}
	}
}
