package app

import (
	"bytes"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// operationsDoc is the page that lists every flag of every command.
const operationsDoc = "../../../docs/operations.md"

// updateDocsEnv, set to 1, makes TestFlagsDocumented rewrite the tables
// instead of failing on a difference.
const updateDocsEnv = "CONFIGHASH_UPDATE_DOCS"

// flagCommand is a command whose flags docs/operations.md tables: its name,
// and its flags bound as the command binds them.
type flagCommand struct {
	name  string
	flags func() *pflag.FlagSet
}

func flagCommands() []flagCommand {
	return []flagCommand{
		{"serve", func() *pflag.FlagSet {
			o := DefaultOptions()
			fs := pflag.NewFlagSet("confighash serve", pflag.ContinueOnError)
			o.bind(fs)
			return fs
		}},
		{"status", func() *pflag.FlagSet {
			o := DefaultStatusOptions()
			fs := pflag.NewFlagSet("confighash status", pflag.ContinueOnError)
			o.bind(fs)
			return fs
		}},
		{"preview", func() *pflag.FlagSet {
			o := DefaultPreviewOptions()
			fs := pflag.NewFlagSet("confighash preview", pflag.ContinueOnError)
			o.bind(fs)
			return fs
		}},
	}
}

// flagRow is one flag as a table row or a line of --help shows it.
type flagRow struct {
	name, short, typ, def, usage string
}

// TestFlagsDocumented keeps each command's flag table in docs/operations.md
// equal to the table rendered from the command's FlagSet, and the rows equal
// to what `confighash CMD --help` prints, both ways: every flag the help
// lists has its row with the same type, default and text, and every row is
// a flag the help lists. With CONFIGHASH_UPDATE_DOCS=1 it rewrites the
// tables from the code instead.
func TestFlagsDocumented(t *testing.T) {
	raw, err := os.ReadFile(operationsDoc)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	update := os.Getenv(updateDocsEnv) == "1"
	for _, c := range flagCommands() {
		rendered := renderFlagTable(c.flags())
		begin, end := flagTableMarkers(c.name)
		before, rest, ok := strings.Cut(doc, begin+"\n")
		if !ok {
			t.Fatalf("%s has no line %q", operationsDoc, begin)
		}
		table, after, ok := strings.Cut(rest, end+"\n")
		if !ok {
			t.Fatalf("%s has no line %q after %q", operationsDoc, end, begin)
		}
		if update {
			doc = before + begin + "\n" + rendered + end + "\n" + after
			continue
		}
		if table != rendered {
			t.Errorf("%s: the flags of confighash %s differ from the code; run %s=1 go test ./cmd/confighash/app -run TestFlagsDocumented", operationsDoc, c.name, updateDocsEnv)
		}

		documented := parseFlagTable(t, c.name, table)
		helped := helpFlags(t, c.name)
		for name, h := range helped {
			d, ok := documented[name]
			switch {
			case !ok:
				t.Errorf("confighash %s --help lists --%s; %s has no row for it", c.name, name, operationsDoc)
			case d != h:
				t.Errorf("confighash %s --%s: %s says %+v; --help says %+v", c.name, name, operationsDoc, d, h)
			}
		}
		for name := range documented {
			if _, ok := helped[name]; !ok {
				t.Errorf("%s documents --%s of confighash %s, which its --help does not list", operationsDoc, name, c.name)
			}
		}
	}
	if update && doc != string(raw) {
		if err := os.WriteFile(operationsDoc, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("rewrote the flag tables of %s", operationsDoc)
	}
}

// flagTableMarkers are the comment lines around a command's table.
func flagTableMarkers(cmd string) (begin, end string) {
	return fmt.Sprintf("<!-- flags of confighash %s: generated from the code by TestFlagsDocumented (%s=1 go test ./cmd/confighash/app -run TestFlagsDocumented) -->", cmd, updateDocsEnv),
		fmt.Sprintf("<!-- end of the flags of confighash %s -->", cmd)
}

// renderFlagTable is the Markdown table of fs's flags, in the order --help
// prints them.
func renderFlagTable(fs *pflag.FlagSet) string {
	var b strings.Builder
	b.WriteString("| flag | type | default | what it does |\n|---|---|---|---|\n")
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Hidden {
			return
		}
		name := "`--" + f.Name + "`"
		if f.Shorthand != "" {
			name = "`-" + f.Shorthand + "`, " + name
		}
		typ, usage := pflag.UnquoteUsage(f)
		if typ == "" {
			typ = f.Value.Type() // a bool, whose --help shows no type
		}
		def := ""
		if !zeroDefault(f.DefValue) {
			def = "`" + f.DefValue + "`"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", name, typ, def, escapeCell(usage))
	})
	return b.String()
}

// zeroDefault reports a default that --help does not show.
func zeroDefault(v string) bool {
	return slices.Contains([]string{"", "false", "0", "0s", "[]"}, v)
}

func escapeCell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

// parseFlagTable reads a table as renderFlagTable writes it, by flag name.
func parseFlagTable(t *testing.T, cmd, table string) map[string]flagRow {
	t.Helper()
	rows := map[string]flagRow{}
	for line := range strings.Lines(table) {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "| `-") {
			continue
		}
		cells := strings.Split(strings.ReplaceAll(strings.Trim(line, "|"), `\|`, "\x00"), "|")
		if len(cells) != 4 {
			t.Errorf("%s, flags of confighash %s: a row of %d cells, want 4: %s", operationsDoc, cmd, len(cells), line)
			continue
		}
		for i := range cells {
			cells[i] = strings.ReplaceAll(strings.TrimSpace(cells[i]), "\x00", "|")
		}
		var r flagRow
		for n := range strings.SplitSeq(cells[0], ",") {
			n = strings.Trim(strings.TrimSpace(n), "`")
			if long, ok := strings.CutPrefix(n, "--"); ok {
				r.name = long
			} else {
				r.short = strings.TrimPrefix(n, "-")
			}
		}
		r.typ = cells[1]
		if r.typ == "bool" {
			r.typ = ""
		}
		r.def = strings.Trim(cells[2], "`")
		r.usage = cells[3]
		if _, dup := rows[r.name]; dup {
			t.Errorf("%s documents --%s of confighash %s twice", operationsDoc, r.name, cmd)
		}
		rows[r.name] = r
	}
	if len(rows) == 0 {
		t.Errorf("%s: the table of confighash %s has no rows", operationsDoc, cmd)
	}
	return rows
}

// helpFlags runs `confighash CMD --help` as the binary does and reads the
// flags it prints, by name.
func helpFlags(t *testing.T, cmd string) map[string]flagRow {
	t.Helper()
	var stdout, stderr bytes.Buffer
	if err := Run(t.Context(), []string{cmd, "--help"}, &stdout, &stderr); err != nil {
		t.Fatalf("confighash %s --help: %v", cmd, err)
	}
	// One flag's line: "  -n, --name type   usage (default X)"; a bool
	// shows no type.
	helpLine := regexp.MustCompile(`^\s+(?:-([A-Za-z0-9]), )?--([a-z0-9-]+)(?: ([A-Za-z0-9-]+))?\s{2,}(.*?)(?: \(default (.*)\))?$`)
	rows := map[string]flagRow{}
	for line := range strings.Lines(stderr.String()) {
		line = strings.TrimRight(line, "\n")
		if !strings.HasPrefix(strings.TrimSpace(line), "-") {
			continue // the command's usage text
		}
		m := helpLine.FindStringSubmatch(line)
		if m == nil {
			t.Errorf("confighash %s --help: cannot read the flag line %q", cmd, line)
			continue
		}
		def := m[5]
		if s, err := strconv.Unquote(def); err == nil {
			def = s
		}
		rows[m[2]] = flagRow{name: m[2], short: m[1], typ: m[3], def: def, usage: m[4]}
	}
	if len(rows) == 0 {
		t.Fatalf("confighash %s --help printed no flags:\n%s", cmd, stderr.String())
	}
	return rows
}
