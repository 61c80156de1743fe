//go:build linux

package controlplane

import (
	"os"
	"path/filepath"
	"testing"
)

func TestFindRepoRootSkipsOtherModules(t *testing.T) {
	root := t.TempDir()
	write := func(path, content string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(root, "go.mod"), "// comment\nmodule \"github.com/confighash/confighash\" // main\n\ngo 1.26\n")
	// A nested module, like the tools modules, must not be taken for the root.
	nested := filepath.Join(root, "e2e", "tools")
	write(filepath.Join(nested, "go.mod"), "module confighash.dev/e2e/tools\n")
	start := filepath.Join(nested, "deeper")
	if err := os.MkdirAll(start, 0o755); err != nil {
		t.Fatal(err)
	}
	got, err := findRepoRoot(start)
	if err != nil {
		t.Fatal(err)
	}
	if got != root {
		t.Errorf("findRepoRoot = %q, want %q", got, root)
	}
	if _, err := findRepoRoot(t.TempDir()); err == nil {
		t.Error("findRepoRoot succeeded outside any module")
	}
}

func TestRepoRootFromPackageDir(t *testing.T) {
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "e2e", "controlplane", "tools", "kube", "go.mod")); err != nil {
		t.Errorf("RepoRoot %s does not contain the tools modules: %v", root, err)
	}
}
