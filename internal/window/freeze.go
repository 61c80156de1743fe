package window

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// Freeze is a period in which no config-triggered rollout starts.
type Freeze struct {
	text     string
	from, to time.Time
}

// String is the freeze as written.
func (f Freeze) String() string { return f.text }

// From is the instant the freeze starts.
func (f Freeze) From() time.Time { return f.from }

// To is the instant the freeze ends, itself no longer frozen.
func (f Freeze) To() time.Time { return f.to }

// Active reports whether t is inside the freeze.
func (f Freeze) Active(t time.Time) bool {
	return !t.Before(f.from) && t.Before(f.to)
}

const (
	dateLayout     = "2006-01-02"
	dateTimeLayout = "2006-01-02T15:04"
)

// ParseFreeze reads "FROM/TO ZONE", each end a local date (2026-12-21) or
// date and time (2026-12-24T18:00) of the zone. A date alone means the
// whole day: the freeze "2026-12-21/2027-01-04 Europe/Berlin" starts at
// 00:00 on 21 December and ends at 24:00 on 4 January. A time the clocks
// skip starts or ends the freeze when they skip it; a time they pass twice
// starts it at its first occurrence and ends it at its last, so the freeze
// is never shorter than written.
func ParseFreeze(text string) (Freeze, error) {
	if len(text) > MaxLen {
		return Freeze{}, fmt.Errorf("freeze of %d bytes: at most %d", len(text), MaxLen)
	}
	fields := strings.Fields(text)
	if len(fields) != 2 {
		return Freeze{}, errors.New(`freeze: want "FROM/TO ZONE", as in "2026-12-21/2027-01-04 Europe/Berlin"`)
	}
	first, last, ok := strings.Cut(fields[0], "/")
	if !ok {
		return Freeze{}, fmt.Errorf("freeze %q: want FROM/TO", fields[0])
	}
	loc, err := zone(fields[1])
	if err != nil {
		return Freeze{}, err
	}
	f := Freeze{text: strings.Join(fields, " ")}
	if f.from, err = freezeEnd(first, loc, false); err != nil {
		return Freeze{}, err
	}
	if f.to, err = freezeEnd(last, loc, true); err != nil {
		return Freeze{}, err
	}
	if !f.to.After(f.from) {
		return Freeze{}, fmt.Errorf("freeze %q ends before it starts", fields[0])
	}
	return f, nil
}

// freezeEnd reads one end of a freeze as an instant: a date alone is the
// start of that day, or for the last end the start of the next.
func freezeEnd(text string, loc *time.Location, last bool) (time.Time, error) {
	layout := dateTimeLayout
	if len(text) == len(dateLayout) {
		layout = dateLayout
	}
	wall, err := time.Parse(layout, text)
	if err != nil {
		return time.Time{}, fmt.Errorf("freeze date %q: want YYYY-MM-DD or YYYY-MM-DDTHH:MM", text)
	}
	if last && layout == dateLayout {
		wall = wall.AddDate(0, 0, 1)
	}
	return instantOf(wall, loc, last), nil
}

// instantOf is the instant at which loc's wall clock reads wall (given in
// UTC's fields): for a wall time the clocks skip, the instant they skip
// it; for one they pass twice, the first occurrence, or the last when
// latest is set.
func instantOf(wall time.Time, loc *time.Location, latest bool) time.Time {
	at := time.Date(wall.Year(), wall.Month(), wall.Day(), wall.Hour(), wall.Minute(), 0, 0, loc)
	var found []time.Time
	shifts, deltas := shiftsOf(loc, at.Add(-48*time.Hour), at.Add(48*time.Hour))
	candidates := []time.Time{at}
	for _, d := range deltas {
		candidates = append(candidates, at.Add(d), at.Add(-d))
	}
	for _, c := range candidates {
		if wallOf(c, loc).Equal(wall) {
			found = append(found, c)
		}
	}
	if len(found) == 0 {
		// Skipped: the first shift after which the wall clock is past it.
		for _, s := range shifts {
			if !wallOf(s, loc).Before(wall) {
				return s
			}
		}
		return at
	}
	best := found[0]
	for _, c := range found[1:] {
		if c.Before(best) != latest {
			best = c
		}
	}
	return best
}

// wallOf is t's wall clock in loc, as a time in UTC's fields, to compare.
func wallOf(t time.Time, loc *time.Location) time.Time {
	l := t.In(loc)
	return time.Date(l.Year(), l.Month(), l.Day(), l.Hour(), l.Minute(), l.Second(), l.Nanosecond(), time.UTC)
}
