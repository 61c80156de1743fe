package termtext

import (
	"strings"
	"testing"
	"unicode"
)

func TestOneLine(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"plain text", "plain text"},
		{"  two\n lines\tand tabs ", "two lines and tabs"},
		{"Crash\x1b[1A\x1b[2K", `Crash\x1b[1A\x1b[2K`},
		{"clip\x1b]52;c;cm0=\a", `clip\x1b]52;c;cm0=\a`},
		{"abc\u202edcba", `abc\u202edcba`},
		{"naïve café ✓", "naïve café ✓"},
		{"bad \xff byte", "bad \ufffd byte"},
	} {
		if got := OneLine(tc.in); got != tc.want {
			t.Errorf("OneLine(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func FuzzOneLine(f *testing.F) {
	f.Add("Crash\x1b[1A\n\u202e")
	f.Fuzz(func(t *testing.T, s string) {
		got := OneLine(s)
		if strings.ContainsFunc(got, func(r rune) bool { return unicode.IsControl(r) || unicode.Is(unicode.Cf, r) }) {
			t.Fatalf("OneLine(%q) = %q keeps a control or format character", s, got)
		}
	})
}
