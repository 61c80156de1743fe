// Package termtext makes text that tenants write safe to print in a
// terminal table: halt reasons, Event messages, API errors.
package termtext

import (
	"strconv"
	"strings"
	"unicode"
)

// OneLine folds s's white space to single spaces, so that it stays in its
// cell, and shows control and format characters escaped ("\x1b",
// "\u202e"): a raw ESC would drive the terminal of whoever reads the table
// (move the cursor, rewrite lines, set the clipboard), and a bidirectional
// override would show the text in another order than it has.
func OneLine(s string) string {
	// Invalid UTF-8 is replaced: a lone 0x9b is a C1 CSI to some terminals.
	s = strings.Join(strings.Fields(strings.ToValidUTF8(s, "\uFFFD")), " ")
	if !strings.ContainsFunc(s, hidden) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if !hidden(r) {
			b.WriteRune(r)
			continue
		}
		q := strconv.QuoteRuneToASCII(r)
		b.WriteString(q[1 : len(q)-1])
	}
	return b.String()
}

func hidden(r rune) bool {
	return unicode.IsControl(r) || unicode.Is(unicode.Cf, r)
}
