package window

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// Bounds on what is read: a schedule or freeze comes from an annotation a
// tenant writes.
const (
	// MaxLen is the longest schedule or freeze read, in bytes.
	MaxLen = 512
	// MaxWindows is the most windows one schedule holds.
	MaxWindows = 16
)

const (
	minutesPerDay = 24 * 60
	daysPerWeek   = 7
)

// Schedule is a set of rollout windows: open when any one of them is.
type Schedule struct {
	text    string
	windows []span
}

// span is one window: the days it starts on and its wall-clock times, in
// minutes after local midnight. An end not after the start crosses
// midnight; an end of minutesPerDay is midnight.
type span struct {
	days       [daysPerWeek]bool // by time.Weekday
	start, end int
	loc        *time.Location
}

// String is the schedule as written.
func (s Schedule) String() string { return s.text }

// Parse reads a schedule: windows separated by ";", each "DAYS FROM-TO
// ZONE", as in "Mon-Fri 09:00-17:00 Europe/Berlin; Sat 10:00-12:00 UTC".
// DAYS is "*" for every day, or a comma list of days (Mon … Sun) and day
// ranges (Fri-Mon wraps over the weekend).
func Parse(text string) (Schedule, error) {
	if len(text) > MaxLen {
		return Schedule{}, fmt.Errorf("schedule of %d bytes: at most %d", len(text), MaxLen)
	}
	parts := strings.Split(text, ";")
	if len(parts) > MaxWindows {
		return Schedule{}, fmt.Errorf("schedule of %d windows: at most %d", len(parts), MaxWindows)
	}
	s := Schedule{text: strings.TrimSpace(text)}
	for _, part := range parts {
		w, err := parseSpan(part)
		if err != nil {
			return Schedule{}, fmt.Errorf("window %q: %w", strings.TrimSpace(part), err)
		}
		s.windows = append(s.windows, w)
	}
	return s, nil
}

func parseSpan(text string) (span, error) {
	fields := strings.Fields(text)
	if len(fields) != 3 {
		return span{}, errors.New(`want "DAYS FROM-TO ZONE", as in "Mon-Fri 09:00-17:00 Europe/Berlin"`)
	}
	var w span
	var err error
	if w.days, err = parseDays(fields[0]); err != nil {
		return span{}, err
	}
	from, to, ok := strings.Cut(fields[1], "-")
	if !ok {
		return span{}, fmt.Errorf("time range %q: want FROM-TO, as in 09:00-17:00", fields[1])
	}
	if w.start, err = parseClock(from, false); err != nil {
		return span{}, err
	}
	if w.end, err = parseClock(to, true); err != nil {
		return span{}, err
	}
	if w.start == w.end {
		return span{}, fmt.Errorf("time range %q is empty or a whole day: write 00:00-24:00 for a whole day", fields[1])
	}
	if w.loc, err = zone(fields[2]); err != nil {
		return span{}, err
	}
	return w, nil
}

var dayNames = map[string]time.Weekday{
	"sun": time.Sunday, "mon": time.Monday, "tue": time.Tuesday, "wed": time.Wednesday,
	"thu": time.Thursday, "fri": time.Friday, "sat": time.Saturday,
}

func parseDays(text string) ([daysPerWeek]bool, error) {
	var days [daysPerWeek]bool
	if text == "*" {
		for d := range days {
			days[d] = true
		}
		return days, nil
	}
	for item := range strings.SplitSeq(text, ",") {
		first, last, isRange := strings.Cut(item, "-")
		from, ok := dayNames[strings.ToLower(first)]
		if !ok {
			return days, fmt.Errorf("day %q: want Mon, Tue, Wed, Thu, Fri, Sat, Sun, a range such as Mon-Fri, or *", first)
		}
		to := from
		if isRange {
			if to, ok = dayNames[strings.ToLower(last)]; !ok {
				return days, fmt.Errorf("day %q: want Mon, Tue, Wed, Thu, Fri, Sat, Sun", last)
			}
		}
		for d := from; ; d = (d + 1) % daysPerWeek {
			days[d] = true
			if d == to {
				break
			}
		}
	}
	return days, nil
}

// parseClock reads HH:MM as minutes after midnight; 24:00 only as an end.
func parseClock(text string, end bool) (int, error) {
	if len(text) != len("15:04") || text[2] != ':' {
		return 0, fmt.Errorf("time %q: want HH:MM", text)
	}
	if end && text == "24:00" {
		return minutesPerDay, nil
	}
	t, err := time.Parse("15:04", text)
	if err != nil {
		return 0, fmt.Errorf("time %q: want HH:MM from 00:00 to 23:59 (24:00 as an end)", text)
	}
	return t.Hour()*60 + t.Minute(), nil
}

// zone loads an IANA zone. "Local" is refused: it means the process's own
// zone, which differs between the server and a laptop running preview.
func zone(name string) (*time.Location, error) {
	if name == "" || name == "Local" {
		return nil, fmt.Errorf("zone %q: want an IANA name such as Europe/Berlin, or UTC", name)
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, fmt.Errorf("zone %q: %w", name, err)
	}
	return loc, nil
}
