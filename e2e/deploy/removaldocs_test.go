package deploy

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/confighash/confighash/e2e/controlplane"
)

// The markers in docs/operations.md's Remove section before the table of
// what stays after an uninstall and before the commands that remove it.
const (
	leftoversMarker       = "<!-- what stays:"
	removalCommandsMarker = "<!-- removal commands:"
)

// leftoverRow is one row of that table.
type leftoverRow struct {
	// Keys are "kind/name" ("*" for any name).
	Keys []string
	// Namespace is "" for cluster-scoped objects, "*" for any namespace.
	Namespace string
	// LeftBy is the cell naming the removals that leave it.
	LeftBy string
}

// leftBy says whether removal (e.g. "helm uninstall") leaves the row's
// objects in an installation without cert-manager or pinning, which rows
// say "only with".
func (r leftoverRow) leftBy(removal string) bool {
	return strings.Contains(r.LeftBy, removal) && !strings.Contains(r.LeftBy, "only with")
}

// matches says whether the row covers an object.
func (r leftoverRow) matches(key, namespace string) bool {
	if r.Namespace != "*" && r.Namespace != namespace {
		return false
	}
	kind, _, _ := strings.Cut(key, "/")
	for _, k := range r.Keys {
		if k == key || k == kind+"/*" {
			return true
		}
	}
	return false
}

// removalDocs are the table and the commands of the Remove section.
type removalDocs struct {
	Rows     []leftoverRow
	Commands [][]string
}

func readRemovalDocs(root string) (removalDocs, error) {
	path := filepath.Join(root, "docs", "operations.md")
	data, err := os.ReadFile(path)
	if err != nil {
		return removalDocs{}, fmt.Errorf("reading %s: %w", path, err)
	}
	return parseRemovalDocs(string(data))
}

func parseRemovalDocs(text string) (removalDocs, error) {
	var d removalDocs
	_, table, ok := strings.Cut(text, leftoversMarker)
	if !ok {
		return d, fmt.Errorf("no %q in the docs", leftoversMarker)
	}
	lines := strings.Split(table, "\n")[1:]
	for i, line := range lines {
		if !strings.HasPrefix(line, "|") {
			break
		}
		if i < 2 {
			continue // header and its rule
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		if len(cells) < 3 {
			return d, fmt.Errorf("row %q: want object, namespace, left by", line)
		}
		row := leftoverRow{Namespace: strings.Trim(strings.TrimSpace(cells[1]), "`"), LeftBy: cells[2]}
		for _, k := range strings.Split(cells[0], ",") {
			k = strings.Trim(strings.TrimSpace(k), "`")
			if !strings.Contains(k, "/") {
				return d, fmt.Errorf("row %q: object %q is not kind/name", line, k)
			}
			row.Keys = append(row.Keys, k)
		}
		d.Rows = append(d.Rows, row)
	}
	if len(d.Rows) == 0 {
		return d, fmt.Errorf("no rows after %q", leftoversMarker)
	}
	_, after, ok := strings.Cut(text, removalCommandsMarker)
	if !ok {
		return d, fmt.Errorf("no %q in the docs", removalCommandsMarker)
	}
	_, block, ok := strings.Cut(after, "```sh\n")
	if !ok {
		return d, fmt.Errorf("no sh block after %q", removalCommandsMarker)
	}
	block, _, _ = strings.Cut(block, "```")
	for _, line := range strings.Split(strings.TrimSpace(block), "\n") {
		args := strings.Fields(line)
		// Run without a shell: plain words only.
		if len(args) < 2 || args[0] != "kubectl" || strings.ContainsAny(line, `'"$|;&<>\`+"`") {
			return d, fmt.Errorf("removal command %q: want kubectl and plain words", line)
		}
		d.Commands = append(d.Commands, args[1:])
	}
	return d, nil
}

// The docs' table and commands parse, and say what the removal spec
// expects: after helm uninstall the key Secret stays; after kubectl delete
// -k, which deletes the namespace, it does not.
func TestRemovalDocsParse(t *testing.T) {
	root, err := controlplane.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	d, err := readRemovalDocs(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Commands) == 0 {
		t.Fatal("no removal commands")
	}
	key := func(removal string) bool {
		for _, r := range d.Rows {
			if r.leftBy(removal) && r.matches("secret/confighash-hmac-key", Namespace) {
				return true
			}
		}
		return false
	}
	if !key("helm uninstall") || key("kubectl delete -k") {
		t.Errorf("want the key Secret left by helm uninstall only: %+v", d.Rows)
	}
}
