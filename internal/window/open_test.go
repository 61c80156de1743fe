package window

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

// changes lists the instants of the next n changes after from.
func changes(s Schedule, from time.Time, n int) []string {
	var out []string
	for range n {
		next, ok := s.NextChange(from)
		if !ok {
			break
		}
		out = append(out, next.UTC().Format(time.RFC3339))
		from = next
	}
	return out
}

func expectChanges(t *testing.T, s Schedule, from string, want ...string) {
	t.Helper()
	got := changes(s, utc(from), len(want))
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("%s from %s changes at %v, want %v", s, from, got, want)
	}
}

// Europe/Berlin went from UTC+1 to UTC+2 at 01:00 UTC on Sunday 29 March
// 2026 (02:00 local became 03:00) and back at 01:00 UTC on Sunday 25
// October (03:00 local became 02:00).
func TestDaylightSavingShifts(t *testing.T) {
	office := mustParse(t, "Mon-Fri 09:00-17:00 Europe/Berlin")
	t.Run("office hours keep their local times", func(t *testing.T) {
		expectChanges(t, office, "2026-03-27T16:30:00Z",
			"2026-03-30T07:00:00Z", "2026-03-30T15:00:00Z") // Friday closed at 16:00 UTC, Monday opens at 07:00 UTC
		expectChanges(t, office, "2026-10-23T06:00:00Z",
			"2026-10-23T07:00:00Z", "2026-10-23T15:00:00Z", "2026-10-26T08:00:00Z", "2026-10-26T16:00:00Z")
	})
	night := mustParse(t, "* 02:00-02:30 Europe/Berlin")
	t.Run("wall times the clocks skip", func(t *testing.T) {
		expectChanges(t, night, "2026-03-28T00:00:00Z",
			"2026-03-28T01:00:00Z", "2026-03-28T01:30:00Z", // Saturday, UTC+1
			"2026-03-30T00:00:00Z", "2026-03-30T00:30:00Z") // Sunday has no 02:00; Monday, UTC+2
		// A window the clocks jump into opens at the jump.
		expectChanges(t, mustParse(t, "Sun 02:15-05:00 Europe/Berlin"), "2026-03-28T12:00:00Z",
			"2026-03-29T01:00:00Z", "2026-03-29T03:00:00Z")
		for _, at := range []string{"2026-03-29T00:59:59Z", "2026-03-29T01:00:00Z", "2026-03-29T01:15:00Z"} {
			if night.Open(utc(at)) {
				t.Errorf("open at %s, a wall time the clocks skipped over", at)
			}
		}
	})
	t.Run("a wall time passed twice is inside both times", func(t *testing.T) {
		expectChanges(t, night, "2026-10-24T23:00:00Z",
			"2026-10-25T00:00:00Z", "2026-10-25T00:30:00Z", // 02:00-02:30 in UTC+2
			"2026-10-25T01:00:00Z", "2026-10-25T01:30:00Z", // and again in UTC+1
			"2026-10-26T01:00:00Z")
	})
	t.Run("a window across the shift", func(t *testing.T) {
		// 01:00 to 04:00 local is two hours of real time in spring, four
		// in autumn.
		s := mustParse(t, "Sun 01:00-04:00 Europe/Berlin")
		expectChanges(t, s, "2026-03-28T12:00:00Z", "2026-03-29T00:00:00Z", "2026-03-29T02:00:00Z")
		expectChanges(t, s, "2026-10-24T12:00:00Z", "2026-10-24T23:00:00Z", "2026-10-25T03:00:00Z")
	})
	t.Run("New York and a half-hour shift", func(t *testing.T) {
		// America/New_York moved to UTC-4 at 07:00 UTC on 8 March 2026;
		// Australia/Lord_Howe shifts by 30 minutes, back from UTC+11 to
		// UTC+10:30 at 15:00 UTC on 4 April 2026 (02:00 local to 01:30).
		expectChanges(t, mustParse(t, "Mon 09:00-17:00 America/New_York"), "2026-03-02T12:00:00Z",
			"2026-03-02T14:00:00Z", "2026-03-02T22:00:00Z", "2026-03-09T13:00:00Z")
		expectChanges(t, mustParse(t, "Sun 01:40-01:50 Australia/Lord_Howe"), "2026-04-04T14:00:00Z",
			"2026-04-04T14:40:00Z", "2026-04-04T14:50:00Z", "2026-04-04T15:10:00Z", "2026-04-04T15:20:00Z")
	})
}

func TestAlwaysAndNeverOpen(t *testing.T) {
	always := mustParse(t, "* 00:00-24:00 UTC")
	if _, ok := always.NextChange(utc("2026-12-04T12:00:00Z")); ok {
		t.Error("a schedule open all the time changes")
	}
	if at, ok := always.NextOpen(utc("2026-12-04T12:00:00Z")); !ok || !at.Equal(utc("2026-12-04T12:00:00Z")) {
		t.Errorf("NextOpen of an open schedule = %v, %v; want now", at, ok)
	}
	var none Schedule
	if none.Open(utc("2026-12-04T12:00:00Z")) {
		t.Error("the zero Schedule is open")
	}
	if _, ok := none.NextOpen(utc("2026-12-04T12:00:00Z")); ok {
		t.Error("the zero Schedule opens")
	}
}

// TestNextChangeIsTheFirstChange checks NextChange against Open itself,
// minute by minute, for schedules in zones with shifts of an hour and of
// half an hour, from instants spread over two years.
func TestNextChangeIsTheFirstChange(t *testing.T) {
	schedules := []string{
		"Mon-Fri 09:00-17:00 Europe/Berlin",
		"* 02:00-02:30 Europe/Berlin",
		"Sat,Sun 01:30-03:30 America/New_York",
		"Fri 22:00-02:15 Australia/Lord_Howe",
		"Tue-Thu 23:00-24:00 America/Santiago; Sun 00:00-00:45 Europe/London",
	}
	r := rand.New(rand.NewPCG(1, 2))
	start := utc("2026-01-01T00:00:00Z")
	for _, text := range schedules {
		s := mustParse(t, text)
		for range 40 {
			from := start.Add(time.Duration(r.Int64N(int64(2 * 365 * 24 * time.Hour))))
			next, ok := s.NextChange(from)
			if !ok {
				t.Fatalf("%s: no change after %s", text, from)
			}
			was := s.Open(from)
			if s.Open(next) == was {
				t.Fatalf("%s: at %s, the change after %s, Open is still %v", text, next, from, was)
			}
			for at := from; at.Before(next); at = at.Add(time.Minute) {
				if s.Open(at) != was {
					t.Fatalf("%s: Open changes at %s, before the change NextChange gives after %s (%s)", text, at, from, next)
				}
			}
			if s.Open(next.Add(-time.Nanosecond)) != was {
				t.Fatalf("%s: Open changes before %s", text, next)
			}
		}
	}
}
