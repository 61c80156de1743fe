package deploy

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	"github.com/confighash/confighash/internal/mdtable"
)

// schemaNode is the part of a JSON schema the values table shows.
type schemaNode struct {
	Type       any                   `json:"type"`
	Enum       []any                 `json:"enum"`
	Properties map[string]schemaNode `json:"properties"`
}

// valueRow is one row of the chart README's values table.
type valueRow struct {
	typ, def string
}

// TestChartReadmeValues: the chart README's values table has one row per
// value the schema defines (a property with no properties of its own),
// and no other; each row's type is the schema's and its default is
// values.yaml's; and values.yaml holds exactly those values.
func TestChartReadmeValues(t *testing.T) {
	_, p := allRenders(t)
	schema := readSchema(t, filepath.Join(p.Chart(), "values.schema.json"))
	data, err := os.ReadFile(filepath.Join(p.Chart(), "values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var values map[string]any
	if err := yaml.Unmarshal(data, &values); err != nil {
		t.Fatal(err)
	}
	want := map[string]valueRow{}
	var walk func(n schemaNode, path []string, v any, present bool)
	walk = func(n schemaNode, path []string, v any, present bool) {
		key := strings.Join(path, ".")
		if len(n.Properties) == 0 {
			if !present {
				t.Errorf("values.yaml lacks %s, which the schema defines", key)
				return
			}
			def, err := json.Marshal(v)
			if err != nil {
				t.Fatal(err)
			}
			want[key] = valueRow{typ: typeCell(n), def: string(def)}
			return
		}
		m, ok := v.(map[string]any)
		if present && !ok && v != nil {
			t.Errorf("values.yaml: %s is not an object", key)
		}
		for k := range m {
			if _, ok := n.Properties[k]; !ok {
				t.Errorf("values.yaml has %s, which the schema does not define", strings.Join(append(path, k), "."))
			}
		}
		for name, c := range n.Properties {
			cv, ok := m[name]
			walk(c, append(slices.Clone(path), name), cv, ok)
		}
	}
	walk(schema, nil, values, true)

	got := readmeRows(t, filepath.Join(p.Chart(), "README.md"))
	for key, w := range want {
		g, ok := got[key]
		switch {
		case !ok:
			t.Errorf("README.md has no row for %s", key)
		case g.typ != w.typ:
			t.Errorf("README.md: %s is a %q, the schema says %q", key, g.typ, w.typ)
		default:
			var gv, wv any
			if err := json.Unmarshal([]byte(g.def), &gv); err != nil {
				t.Errorf("README.md: %s: default %s is not JSON: %v", key, g.def, err)
				continue
			}
			_ = json.Unmarshal([]byte(w.def), &wv)
			if diff := cmp.Diff(wv, gv); diff != "" {
				t.Errorf("README.md: %s defaults to %s, values.yaml to %s", key, g.def, w.def)
			}
		}
	}
	for key := range got {
		if _, ok := want[key]; !ok {
			t.Errorf("README.md has a row for %s, which is no value of the schema", key)
		}
	}
}

func readSchema(t *testing.T, path string) schemaNode {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var n schemaNode
	if err := json.Unmarshal(data, &n); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return n
}

// typeCell is how the table writes a schema's type: an enum as
// "one of `a`, `b`", several types as "a or b".
func typeCell(n schemaNode) string {
	if len(n.Enum) > 0 {
		var vs []string
		for _, e := range n.Enum {
			vs = append(vs, fmt.Sprintf("`%v`", e))
		}
		return "one of " + strings.Join(vs, ", ")
	}
	switch t := n.Type.(type) {
	case string:
		return t
	case []any:
		var ts []string
		for _, e := range t {
			ts = append(ts, fmt.Sprint(e))
		}
		return strings.Join(ts, " or ")
	}
	return ""
}

// readmeRows reads the "## Values" table: | `key` | type | `default` | text |.
func readmeRows(t *testing.T, path string) map[string]valueRow {
	t.Helper()
	text, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	section, ok := mdtable.Section(string(text), "## Values")
	if !ok {
		t.Fatalf("%s has no ## Values section", path)
	}
	rows := map[string]valueRow{}
	for _, tb := range mdtable.Tables(section) {
		for _, cells := range tb.Rows {
			if !strings.HasPrefix(cells[0], "`") {
				continue
			}
			if len(cells) != 4 {
				t.Errorf("%s: a row of %d cells, want 4: %q", path, len(cells), cells)
				continue
			}
			key := strings.Trim(strings.TrimSpace(cells[0]), "`")
			if _, dup := rows[key]; dup {
				t.Errorf("%s lists %s twice", path, key)
			}
			rows[key] = valueRow{typ: strings.TrimSpace(cells[1]), def: strings.Trim(strings.TrimSpace(cells[2]), "`")}
		}
	}
	if len(rows) == 0 {
		t.Fatalf("%s: no rows in its values table", path)
	}
	return rows
}
