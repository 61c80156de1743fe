package contract

import (
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/confighash/confighash/internal/mdtable"
)

// The tables this test holds to the package: each in its file and section,
// by its header row.
const (
	keysFile       = "README.md"
	keysSection    = "## Annotations"
	keysHeader     = "| what | where | values |"
	reasonsFile    = "docs/operations.md"
	reasonsSection = "## Events"
	reasonsHeader  = "| reason | type | on | means |"
)

// valueOf names the key whose value each switch constant is; the documented row
// of that key must show it.
func valueOf(name string) string {
	return map[string]string{
		"InjectionDisabled": "InjectionAnnotation",
		"InjectionEnabled":  "InjectionLabel",
		"IgnoreTrue":        "IgnoreAnnotation",
		"WavesOff":          "WavesAnnotation",
		"HaltReleased":      "HaltAnnotation",
	}[name]
}

// whereOf is what the where column of a constant's row must say, for the
// constants whose value alone does not tell their row.
func whereOf(name string) string {
	return map[string]string{
		"FieldManager": "field manager",
		"EventSource":  "Event reporting controller",
	}[name]
}

// TestReadmeReference holds README.md's annotation table and
// docs/operations.md's Event table to this package: every key, switch
// value, name and Event reason declared here has its row, and every row
// names something declared here.
func TestReadmeReference(t *testing.T) {
	consts := declared(t)
	keys := sectionTables(t, keysFile, keysSection, keysHeader)[keysHeader]
	reasons := sectionTables(t, reasonsFile, reasonsSection, reasonsHeader)[reasonsHeader]
	if len(keys) == 0 {
		t.Fatalf("%s's %s section has no %q table", keysFile, keysSection, keysHeader)
	}
	if len(reasons) == 0 {
		t.Fatalf("%s's %s section has no %q table", reasonsFile, reasonsSection, reasonsHeader)
	}

	// From the package to the docs.
	keyRows := map[string]bool{}    // "what|where" the package accounts for
	reasonRows := map[string]bool{} // reasons the package declares
	for _, name := range slices.Sorted(maps.Keys(consts)) {
		value := consts[name]
		switch {
		case strings.HasPrefix(name, "Reason"):
			reasonRows[value] = true
			row := findRow(reasons, value, "")
			if row == nil {
				t.Errorf("%s = %q has no row in %s's Event table", name, value, reasonsFile)
				continue
			}
			eventType, on, ok := EventOf(value)
			if !ok {
				t.Errorf("%s = %q: EventOf does not know it", name, value)
				continue
			}
			if row[1] != eventType || row[2] != on {
				t.Errorf("%s's Event table says %s is %s on %s; EventOf says %s on %s", reasonsFile, row[0], row[1], row[2], eventType, on)
			}
		case strings.HasSuffix(name, "Annotation"), strings.HasSuffix(name, "Label"):
			where := "annotation"
			if strings.HasSuffix(name, "Label") {
				where = "label"
			}
			row := findRow(keys, value, where)
			if row == nil {
				t.Errorf("%s = %q has no row in %s's annotation table whose where column says %q", name, value, keysFile, where)
				continue
			}
			keyRows[row[0]+"|"+row[1]] = true
		case whereOf(name) != "":
			row := findRow(keys, value, whereOf(name))
			if row == nil {
				t.Errorf("%s = %q has no row in %s's annotation table whose where column says %q", name, value, keysFile, whereOf(name))
				continue
			}
			keyRows[row[0]+"|"+row[1]] = true
		case valueOf(name) != "":
			key := valueOf(name)
			where := "annotation"
			if strings.HasSuffix(key, "Label") {
				where = "label"
			}
			row := findRow(keys, consts[key], where)
			if row == nil {
				continue // reported for the key
			}
			if v := row[2]; !strings.Contains(v, "`"+value+"`") && !strings.Contains(v, strconv.Quote(value)) {
				t.Errorf("%s = %q: %s's row of %s (%s) does not show the value", name, value, keysFile, key, consts[key])
			}
		default:
			t.Errorf("%s = %q: not a key, a switch value or a reason; say in this test which documented row it is", name, value)
		}
	}

	// From the docs to the package.
	seenKeys := map[string]bool{}
	for _, row := range keys {
		k := row[0] + "|" + row[1]
		if !keyRows[k] {
			t.Errorf("%s's annotation table documents %s (%s), which package contract does not declare", keysFile, row[0], row[1])
		}
		if seenKeys[k] {
			t.Errorf("%s's annotation table documents %s (%s) twice", keysFile, row[0], row[1])
		}
		seenKeys[k] = true
	}
	seen := map[string]bool{}
	for _, row := range reasons {
		r := unquote(row[0])
		if !reasonRows[r] {
			t.Errorf("%s's Event table documents %s, which package contract does not declare", reasonsFile, row[0])
		}
		if seen[r] {
			t.Errorf("%s's Event table documents %s twice", reasonsFile, row[0])
		}
		seen[r] = true
	}
}

// findRow returns the first row whose first cell is `value` and whose second
// contains where.
func findRow(rows [][]string, value, where string) []string {
	for _, r := range rows {
		if unquote(r[0]) == value && strings.Contains(r[1], where) {
			return r
		}
	}
	return nil
}

func unquote(cell string) string { return strings.Trim(cell, "`") }

// declared returns the exported constants of this package, read from its
// source so that a new one cannot be left out of the docs by forgetting a
// list here.
func declared(t *testing.T) map[string]string {
	t.Helper()
	fset := token.NewFileSet()
	paths, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	consts := map[string]string{}
	for _, p := range paths {
		if strings.HasSuffix(p, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, p, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.CONST {
				continue
			}
			for _, s := range g.Specs {
				vs := s.(*ast.ValueSpec)
				for i, n := range vs.Names {
					if !n.IsExported() {
						continue
					}
					var lit *ast.BasicLit
					if i < len(vs.Values) {
						lit, _ = vs.Values[i].(*ast.BasicLit)
					}
					if lit == nil || lit.Kind != token.STRING {
						t.Errorf("%s: %s is not a string literal; this test reads only those", fset.Position(n.Pos()), n.Name)
						continue
					}
					v, err := strconv.Unquote(lit.Value)
					if err != nil {
						t.Fatal(err)
					}
					consts[n.Name] = v
				}
			}
		}
	}
	if len(consts) == 0 {
		t.Fatal("found no exported constants in package contract")
	}
	return consts
}

// sectionTables returns the rows of each table in the section of file (a
// path from the repository's root) that begins with the heading line
// section, by header row. A table in that section other than the one with
// header want fails the test: check it here or move it out of the section.
func sectionTables(t *testing.T, file, section, want string) map[string][][]string {
	t.Helper()
	text, ok := mdtable.Section(repoFile(t, file), section)
	if !ok {
		t.Fatalf("%s has no %q section", file, section)
	}
	tables := map[string][][]string{}
	for _, tb := range mdtable.Tables(text) {
		if tb.Header != want {
			t.Errorf("%s's %s section has a table this test does not know, with header %q: check it here or move it out of the section", file, section, tb.Header)
		}
		for _, cells := range tb.Rows {
			if len(cells) < 3 {
				t.Fatalf("%s: a row of %s's table has fewer than 3 cells: %q", file, section, cells)
			}
		}
		tables[tb.Header] = append(tables[tb.Header], tb.Rows...)
	}
	return tables
}

// repoFile reads file at the root of the repository (the directory of the
// go.mod above this package).
func repoFile(t *testing.T, file string) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(file)))
			if err != nil {
				t.Fatal(err)
			}
			return string(b)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatalf("%s: not inside the confighash repository", file)
		}
		dir = parent
	}
}
