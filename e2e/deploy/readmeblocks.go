package deploy

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"regexp"
	"strings"
)

// ReadmeRegistry is the registry host the README's commands name, the one
// thing TestReadmeInstall substitutes (with the local registry's) in the
// README's install and use commands: it runs them as they are written, each
// a fenced sh block right after a marker line `<!-- e2e: NAME -->`.
const ReadmeRegistry = "registry.example.com"

// ReadmeBlocks are the marked blocks the spec runs, in the order a user
// reads them.
func ReadmeBlocks() []string {
	return []string{"image-push", "install-helm", "install-kustomize", "use-label", "use-stamp", "use-preview-status"}
}

var readmeMarker = regexp.MustCompile(`^<!-- e2e: ([a-z0-9-]+) -->$`)

// ParseReadmeBlocks returns every marked block of a Markdown file by name:
// its lines without the fence's indentation (a block inside a list item is
// indented). A marker not followed by a fenced sh block, an unclosed block
// and a name used twice are errors, so that a README edit cannot drop a
// command from the spec unnoticed.
func ParseReadmeBlocks(markdown []byte) (map[string]string, error) {
	blocks := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(markdown))
	line := 0
	next := func() (string, bool) {
		if !sc.Scan() {
			return "", false
		}
		line++
		return sc.Text(), true
	}
	for {
		text, ok := next()
		if !ok {
			break
		}
		m := readmeMarker.FindStringSubmatch(strings.TrimSpace(text))
		if m == nil {
			continue
		}
		name, at := m[1], line
		if _, dup := blocks[name]; dup {
			return nil, fmt.Errorf("line %d: block %q is marked twice", at, name)
		}
		fence, ok := next()
		if !ok || strings.TrimSpace(fence) != "```sh" {
			return nil, fmt.Errorf("line %d: marker %q is not followed by a ```sh block", at, name)
		}
		indent := fence[:len(fence)-len(strings.TrimLeft(fence, " "))]
		var body []string
		closed := false
		for !closed {
			l, ok := next()
			if !ok {
				return nil, fmt.Errorf("line %d: block %q is not closed", at, name)
			}
			if strings.TrimSpace(l) == "```" {
				closed = true
				continue
			}
			body = append(body, strings.TrimPrefix(l, indent))
		}
		blocks[name] = strings.Join(body, "\n") + "\n"
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading: %w", err)
	}
	return blocks, nil
}

// ReadReadmeBlocks reads the repository README's marked blocks and checks
// that they are exactly ReadmeBlocks: a marked block the spec does not run
// is an error too.
func ReadReadmeBlocks(path string) (map[string]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading the README: %w", err)
	}
	blocks, err := ParseReadmeBlocks(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	want := ReadmeBlocks()
	for _, name := range want {
		if _, ok := blocks[name]; !ok {
			return nil, fmt.Errorf("%s: no block marked <!-- e2e: %s -->", path, name)
		}
	}
	if len(blocks) != len(want) {
		return nil, fmt.Errorf("%s: %d marked blocks, the spec runs %d (%s)", path, len(blocks), len(want), strings.Join(want, ", "))
	}
	return blocks, nil
}
