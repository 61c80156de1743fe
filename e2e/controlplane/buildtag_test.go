//go:build linux

package controlplane

import (
	"go/build/constraint"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestEveryFileIsLinuxOnly keeps the package's files in agreement: the
// package needs Linux (process groups, Pdeathsig, /proc), and a file without
// the constraint would make it half-compile elsewhere instead of being left
// out whole.
func TestEveryFileIsLinuxOnly(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		first, _, _ := strings.Cut(string(b), "\n")
		expr, err := constraint.Parse(first)
		if err != nil {
			t.Errorf("%s: no //go:build line first (want one that needs linux)", f)
			continue
		}
		if expr.Eval(func(tag string) bool { return tag != "linux" }) {
			t.Errorf("%s: %q holds without linux", f, first)
		}
	}
}
