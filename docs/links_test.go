package docs

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// TestLinksResolve: every relative link in README.md and docs/*.md points
// at a file or directory of the repository, and a link with an #anchor at
// a heading of its Markdown file.
func TestLinksResolve(t *testing.T) {
	pages, err := filepath.Glob("*.md")
	if err != nil {
		t.Fatal(err)
	}
	pages = append(pages, filepath.Join("..", "README.md"))
	anchors := map[string]map[string]bool{} // by cleaned path
	checked := 0
	for _, page := range pages {
		text, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for _, target := range links(string(text)) {
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			checked++
			path, anchor, _ := strings.Cut(target, "#")
			file := filepath.Clean(page)
			if path != "" {
				file = filepath.Join(filepath.Dir(page), filepath.FromSlash(path))
			}
			if _, err := os.Stat(file); err != nil {
				t.Errorf("%s links to %s: %v", page, target, err)
				continue
			}
			if anchor == "" {
				continue
			}
			if anchors[file] == nil {
				b, err := os.ReadFile(file)
				if err != nil {
					t.Errorf("%s links to %s: %v", page, target, err)
					continue
				}
				anchors[file] = headingAnchors(string(b))
			}
			if !anchors[file][anchor] {
				t.Errorf("%s links to %s: %s has no heading with anchor %q", page, target, file, anchor)
			}
		}
	}
	if checked == 0 {
		t.Fatal("found no relative link at all: the parsing is broken")
	}
}

// prose returns the lines of a Markdown text outside fenced code blocks.
func prose(text string) []string {
	var out []string
	fenced := false
	for line := range strings.Lines(text) {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		if !fenced {
			out = append(out, strings.TrimRight(line, "\n"))
		}
	}
	return out
}

// links returns the targets of the inline links and images and of the link
// reference definitions of a Markdown text, outside code.
func links(text string) []string {
	inline := regexp.MustCompile(`\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)
	reference := regexp.MustCompile(`^\s{0,3}\[[^\]]+\]:\s*(\S+)`)
	code := regexp.MustCompile("`[^`]*`")
	var out []string
	for _, line := range prose(text) {
		line = code.ReplaceAllString(line, "")
		for _, m := range inline.FindAllStringSubmatch(line, -1) {
			out = append(out, strings.Trim(m[1], "<>"))
		}
		if m := reference.FindStringSubmatch(line); m != nil {
			out = append(out, strings.Trim(m[1], "<>"))
		}
	}
	return out
}

// headingAnchors returns the anchors GitHub gives the ATX headings of a
// Markdown text: the heading's text without its markup, lower-cased, with
// every character but letters, digits, spaces, hyphens and underscores
// dropped and spaces turned into hyphens; a repeated anchor gets -1, -2, ...
func headingAnchors(text string) map[string]bool {
	heading := regexp.MustCompile(`^#{1,6}\s+(.*?)\s*#*\s*$`)
	link := regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)
	anchors := map[string]bool{}
	seen := map[string]int{}
	for _, line := range prose(text) {
		m := heading.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		title := link.ReplaceAllString(m[1], "$1")
		var b strings.Builder
		for _, r := range strings.ToLower(title) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				b.WriteRune(r)
			}
		}
		anchor := b.String()
		if n := seen[anchor]; n > 0 {
			seen[anchor]++
			anchor = fmt.Sprintf("%s-%d", anchor, n)
		} else {
			seen[anchor] = 1
		}
		anchors[anchor] = true
	}
	return anchors
}
