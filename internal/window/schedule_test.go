package window

import (
	"strings"
	"testing"
	"time"
)

func mustParse(t *testing.T, text string) Schedule {
	t.Helper()
	s, err := Parse(text)
	if err != nil {
		t.Fatalf("Parse(%q): %v", text, err)
	}
	return s
}

func utc(text string) time.Time {
	t, err := time.Parse(time.RFC3339, text)
	if err != nil {
		panic(err)
	}
	return t
}

func TestParseRefuses(t *testing.T) {
	for _, c := range []struct{ text, want string }{
		{"", "DAYS FROM-TO ZONE"},
		{"Mon-Fri 09:00-17:00", "DAYS FROM-TO ZONE"},
		{"Mon-Fri 09:00-17:00 Europe/Berlin extra", "DAYS FROM-TO ZONE"},
		{"Mon-Fry 09:00-17:00 UTC", `day "Fry"`},
		{"Mon- 09:00-17:00 UTC", `day ""`},
		{"Mon-Fri 9:00-17:00 UTC", `time "9:00"`},
		{"Mon-Fri 09:00-25:00 UTC", `time "25:00"`},
		{"Mon-Fri 24:00-05:00 UTC", `time "24:00"`},
		{"Mon-Fri 09:00 UTC", "FROM-TO"},
		{"Mon-Fri 09:00-09:00 UTC", "00:00-24:00"},
		{"Mon-Fri 09:00-17:00 Mars/Olympus", `zone "Mars/Olympus"`},
		{"Mon-Fri 09:00-17:00 Local", `zone "Local"`},
		{"* 09:00-17:00 UTC;", "DAYS FROM-TO ZONE"},
		{strings.Repeat("* 09:00-17:00 UTC;", MaxWindows) + "* 09:00-17:00 UTC", "windows"},
		{strings.Repeat(" ", MaxLen+1), "bytes"},
	} {
		if _, err := Parse(c.text); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Parse(%q) = %v, want an error naming %s", c.text, err, c.want)
		}
	}
}

func TestOpenOfficeHours(t *testing.T) {
	s := mustParse(t, "Mon-Fri 09:00-17:00 Europe/Berlin")
	for _, c := range []struct {
		at   string
		open bool
	}{
		{"2026-12-07T07:59:59Z", false}, // Monday 08:59:59 in Berlin (UTC+1)
		{"2026-12-07T08:00:00Z", true},
		{"2026-12-07T15:59:59Z", true},
		{"2026-12-07T16:00:00Z", false}, // 17:00: the end is excluded
		{"2026-12-05T10:00:00Z", false}, // Saturday
		{"2026-07-06T07:00:00Z", true},  // Monday 09:00 in summer (UTC+2)
		{"2026-07-06T15:00:00Z", false},
	} {
		if got := s.Open(utc(c.at)); got != c.open {
			t.Errorf("Open(%s) = %v, want %v", c.at, got, c.open)
		}
	}
}

func TestOpenAcrossMidnightAndWeekend(t *testing.T) {
	s := mustParse(t, "Fri-Mon 22:00-02:00 UTC")
	for _, c := range []struct {
		at   string
		open bool
	}{
		{"2026-12-04T21:59:00Z", false}, // Friday
		{"2026-12-04T22:00:00Z", true},
		{"2026-12-05T01:59:00Z", true}, // Saturday, Friday's window
		{"2026-12-07T23:00:00Z", true}, // Monday
		{"2026-12-08T01:00:00Z", true}, // Tuesday, Monday's window
		{"2026-12-08T22:30:00Z", false},
		{"2026-12-10T01:00:00Z", false}, // Thursday
	} {
		if got := s.Open(utc(c.at)); got != c.open {
			t.Errorf("Open(%s) = %v, want %v", c.at, got, c.open)
		}
	}
	if !mustParse(t, "Sat 00:00-24:00 UTC").Open(utc("2026-12-05T23:59:00Z")) {
		t.Error("a whole day's window is closed at 23:59")
	}
}

func TestSeveralWindowsOpenWhenAnyIs(t *testing.T) {
	s := mustParse(t, "Mon 09:00-10:00 Europe/Berlin; Mon 09:00-10:00 America/New_York")
	for at, open := range map[string]bool{
		"2026-12-07T08:30:00Z": true,  // Berlin 09:30
		"2026-12-07T12:00:00Z": false, // between the two
		"2026-12-07T14:30:00Z": true,  // New York 09:30
	} {
		if got := s.Open(utc(at)); got != open {
			t.Errorf("Open(%s) = %v, want %v", at, got, open)
		}
	}
}
