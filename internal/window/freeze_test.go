package window

import (
	"strings"
	"testing"
)

func TestParseFreeze(t *testing.T) {
	for _, c := range []struct{ text, from, to string }{
		// Dates alone: the whole days, in Berlin's winter time.
		{"2026-12-21/2027-01-04 Europe/Berlin", "2026-12-20T23:00:00Z", "2027-01-04T23:00:00Z"},
		{"2026-12-24T18:00/2026-12-27T08:00 UTC", "2026-12-24T18:00:00Z", "2026-12-27T08:00:00Z"},
		// 02:30 on 29 March 2026 never happens in Berlin: the freeze starts
		// when the clocks skip it.
		{"2026-03-29T02:30/2026-03-30 Europe/Berlin", "2026-03-29T01:00:00Z", "2026-03-30T22:00:00Z"},
		// 02:30 on 25 October 2026 happens twice: the freeze ends at the last.
		{"2026-10-24/2026-10-25T02:30 Europe/Berlin", "2026-10-23T22:00:00Z", "2026-10-25T01:30:00Z"},
		// ... and starts at the first.
		{"2026-10-25T02:30/2026-10-26 Europe/Berlin", "2026-10-25T00:30:00Z", "2026-10-26T23:00:00Z"},
	} {
		f, err := ParseFreeze(c.text)
		if err != nil {
			t.Errorf("ParseFreeze(%q): %v", c.text, err)
			continue
		}
		if !f.From().Equal(utc(c.from)) || !f.To().Equal(utc(c.to)) {
			t.Errorf("ParseFreeze(%q) = %s to %s, want %s to %s", c.text, f.From().UTC(), f.To().UTC(), c.from, c.to)
		}
		if !f.Active(f.From()) || f.Active(f.To()) || f.Active(f.From().Add(-1)) {
			t.Errorf("%q: Active is not [From, To)", c.text)
		}
	}
}

func TestParseFreezeRefuses(t *testing.T) {
	for _, c := range []struct{ text, want string }{
		{"2026-12-21/2027-01-04", "FROM/TO ZONE"},
		{"2026-12-21 Europe/Berlin", "FROM/TO"},
		{"2026-12-21/2026-12-20 Europe/Berlin", "ends before it starts"},
		{"2026-12-21T10:00/2026-12-21T10:00 UTC", "ends before it starts"},
		{"2026-12-21/2027-13-04 UTC", `freeze date "2027-13-04"`},
		{"2026-12-21 10:00/2027-01-04 UTC", "FROM/TO ZONE"},
		{"2026-12-21/2027-01-04 Nowhere/Else", `zone "Nowhere/Else"`},
		{"2026-12-21/2027-01-04 " + strings.Repeat("x", MaxLen), "bytes"},
	} {
		if _, err := ParseFreeze(c.text); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ParseFreeze(%q) = %v, want an error naming %s", c.text, err, c.want)
		}
	}
}
