package deploy

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadmeBlocks: every block TestReadmeInstall runs is marked in the
// README, is valid bash, and the blocks that name the image name it under
// ReadmeRegistry, the one host the spec substitutes.
func TestReadmeBlocks(t *testing.T) {
	_, blocks := readmeBlocks(t)
	for name, script := range blocks {
		if out, err := exec.Command("bash", "-n", "-c", script).CombinedOutput(); err != nil {
			t.Errorf("block %s is not valid bash: %v\n%s", name, err, out)
		}
	}
	for _, name := range []string{"image-push", "install-helm", "install-kustomize"} {
		if !strings.Contains(blocks[name], ReadmeRegistry+"/confighash") {
			t.Errorf("block %s does not name the image under %s:\n%s", name, ReadmeRegistry, blocks[name])
		}
	}
}

// readmeBlocks finds the tree and reads its README's blocks.
func readmeBlocks(t *testing.T) (Paths, map[string]string) {
	t.Helper()
	p, err := FindPaths()
	if err != nil {
		t.Fatal(err)
	}
	blocks, err := ReadReadmeBlocks(filepath.Join(p.Root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	return p, blocks
}

// TestParseReadmeBlocks: indented blocks lose their indentation, and a
// README edit that would silently drop a command is refused.
func TestParseReadmeBlocks(t *testing.T) {
	got, err := ParseReadmeBlocks([]byte("text\n<!-- e2e: a -->\n```sh\necho a\n```\n1. item\n\n   <!-- e2e: b -->\n   ```sh\n   echo b \\\n     c\n   ```\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got["a"] != "echo a\n" || got["b"] != "echo b \\\n  c\n" || len(got) != 2 {
		t.Errorf("blocks %q", got)
	}
	for _, bad := range []string{
		"<!-- e2e: a -->\n\n```sh\necho\n```\n",                      // marker not right before
		"<!-- e2e: a -->\n```console\n$ echo\n```\n",                 // not sh
		"<!-- e2e: a -->\n```sh\necho\n",                             // unclosed
		"<!-- e2e: a -->\n```sh\n```\n<!-- e2e: a -->\n```sh\n```\n", // twice
	} {
		if _, err := ParseReadmeBlocks([]byte(bad)); err == nil {
			t.Errorf("accepted %q", bad)
		}
	}
}
