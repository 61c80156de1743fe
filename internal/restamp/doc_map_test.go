package restamp

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The stage map in doc.go names every file of the package, and names no
// file that is not there: a newcomer finds each stage from it.
func TestStageMapNamesEveryFile(t *testing.T) {
	doc, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	named := map[string]bool{}
	for _, m := range regexp.MustCompile(`\b[a-z0-9_]+\.go\b`).FindAllString(string(doc), -1) {
		named[m] = true
	}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if !strings.HasSuffix(f, "_test.go") && !named[f] {
			t.Errorf("doc.go's stage map does not name %s", f)
		}
	}
	for f := range named {
		if !slices.Contains(files, f) {
			t.Errorf("doc.go names %s, which is not in the package", f)
		}
	}
}
