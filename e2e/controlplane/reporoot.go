//go:build linux

package controlplane

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// modulePath identifies the repository root: the binaries cache and the tools
// modules are located relative to it, whatever directory a test runs in.
const modulePath = "github.com/confighash/confighash"

// RepoRoot walks up from the working directory to the directory whose go.mod
// declares the confighash module. Tests run in their package directory and
// `go run` runs wherever the user is, so neither can rely on the cwd.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("getting working directory: %w", err)
	}
	return findRepoRoot(dir)
}

func findRepoRoot(start string) (string, error) {
	dir := start
	for {
		mod, err := moduleOf(filepath.Join(dir, "go.mod"))
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
		if mod == modulePath {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod declaring module %s in %s or any parent", modulePath, start)
		}
		dir = parent
	}
}

// moduleOf returns the module path declared by a go.mod file. A full parser
// (golang.org/x/mod) would be a new dependency for one line of text.
func moduleOf(goMod string) (string, error) {
	f, err := os.Open(goMod)
	if err != nil {
		return "", fmt.Errorf("opening %s: %w", goMod, err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		rest, ok := strings.CutPrefix(line, "module")
		if !ok || (rest != "" && rest[0] != ' ' && rest[0] != '\t') {
			continue
		}
		if i := strings.Index(rest, "//"); i >= 0 {
			rest = rest[:i]
		}
		return strings.Trim(strings.TrimSpace(rest), `"`+"`"), nil
	}
	if err := sc.Err(); err != nil {
		return "", fmt.Errorf("reading %s: %w", goMod, err)
	}
	return "", nil
}
