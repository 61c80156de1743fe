package mdtable

import "strings"

// Section returns the body of doc's section whose heading line is heading
// (for example "## Series"), up to the next heading of level two ("## ");
// ok is false when doc has no such heading line.
func Section(doc, heading string) (body string, ok bool) {
	doc = strings.ReplaceAll(doc, "\r\n", "\n")
	var found bool
	if strings.HasPrefix(doc, heading+"\n") {
		body, found = doc[len(heading)+1:], true
	} else {
		_, body, found = strings.Cut(doc, "\n"+heading+"\n")
	}
	if !found {
		return "", false
	}
	if i := strings.Index(body, "\n## "); i >= 0 {
		body = body[:i+1]
	}
	return body, true
}

// Table is one table of a Markdown text: its header line as written
// (trimmed), and its rows as trimmed cells, header and separator left out.
type Table struct {
	Header string
	Rows   [][]string
}

// Tables returns the tables of text in the order they appear. A table is a
// run of lines that begin with "|"; its first line is the header and a line
// of dashes after it the separator. A cell holding "|" must escape it as
// "\|"; it is returned unescaped.
func Tables(text string) []Table {
	var tables []Table
	var cur *Table
	for line := range strings.Lines(text) {
		line = strings.TrimSpace(line)
		switch {
		case !strings.HasPrefix(line, "|"):
			cur = nil
		case cur == nil:
			tables = append(tables, Table{Header: line})
			cur = &tables[len(tables)-1]
		case separator(line) && len(cur.Rows) == 0:
		default:
			cur.Rows = append(cur.Rows, Cells(line))
		}
	}
	return tables
}

// Cells splits one table line into its trimmed cells.
func Cells(line string) []string {
	line = strings.TrimSpace(line)
	line = strings.TrimPrefix(line, "|")
	if strings.HasSuffix(line, "|") && !strings.HasSuffix(line, `\|`) {
		line = line[:len(line)-1]
	}
	var cells []string
	var cell strings.Builder
	for i := 0; i < len(line); i++ {
		switch {
		case line[i] == '\\' && i+1 < len(line) && line[i+1] == '|':
			cell.WriteByte('|')
			i++
		case line[i] == '|':
			cells = append(cells, strings.TrimSpace(cell.String()))
			cell.Reset()
		default:
			cell.WriteByte(line[i])
		}
	}
	return append(cells, strings.TrimSpace(cell.String()))
}

// separator reports whether line is a table's header separator, such as
// "|---|:---:|".
func separator(line string) bool {
	return strings.Trim(line, "|-: ") == "" && strings.Contains(line, "-")
}
