package window

import (
	"slices"
	"time"
	// The tz rules travel with the binary: the image has no zoneinfo of its
	// own to rely on, and a laptop's may be older or newer than the server's.
	_ "time/tzdata"
)

// horizon is how far NextChange looks: a week of windows and a day on
// each side for windows that cross midnight and for zone shifts.
const horizon = (daysPerWeek + 2) * 24 * time.Hour

// Open reports whether the schedule lets a rollout start at t. The zero
// Schedule has no windows and is never open.
func (s Schedule) Open(t time.Time) bool {
	for _, w := range s.windows {
		if w.open(t) {
			return true
		}
	}
	return false
}

// open reports whether t's wall clock in w's zone is inside w.
func (w span) open(t time.Time) bool {
	local := t.In(w.loc)
	now := local.Hour()*60 + local.Minute()
	day := local.Weekday()
	if w.end > w.start {
		return w.days[day] && now >= w.start && now < w.end
	}
	yesterday := (day + daysPerWeek - 1) % daysPerWeek
	return (w.days[day] && now >= w.start) || (w.days[yesterday] && now < w.end)
}

// NextChange is the first instant after t at which Open gives another
// answer than at t, and false when none comes within a week (a schedule
// open all the time).
func (s Schedule) NextChange(t time.Time) (time.Time, bool) {
	was := s.Open(t)
	for _, c := range s.candidates(t) {
		if c.After(t) && s.Open(c) != was {
			return c, true
		}
	}
	return time.Time{}, false
}

// NextOpen is t when the schedule is open at t, else the instant it next
// opens; false when it never opens within a week.
func (s Schedule) NextOpen(t time.Time) (time.Time, bool) {
	if s.Open(t) {
		return t, true
	}
	return s.NextChange(t)
}

// candidates are the instants, sorted, at which Open can change from t on
// within the horizon: where a window's zone shifts its clock, and where
// the wall clock reads a window's start or end, at each occurrence of
// that wall time (twice where the clocks go back). Each is checked by
// Open itself, so a candidate too many costs a check, never an answer.
func (s Schedule) candidates(t time.Time) []time.Time {
	var out []time.Time
	for _, w := range s.windows {
		shifts, deltas := shiftsOf(w.loc, t.Add(-24*time.Hour), t.Add(horizon))
		out = append(out, shifts...)
		local := t.In(w.loc)
		y, m, d := local.Date()
		for day := -1; day <= daysPerWeek+1; day++ {
			for _, minutes := range [...]int{w.start, w.end} {
				at := time.Date(y, m, d+day, 0, minutes, 0, 0, w.loc)
				out = append(out, at)
				for _, delta := range deltas {
					out = append(out, at.Add(delta), at.Add(-delta))
				}
			}
		}
	}
	slices.SortFunc(out, func(a, b time.Time) int { return a.Compare(b) })
	return slices.CompactFunc(out, time.Time.Equal)
}

// shiftsOf lists loc's zone transitions in (from, to], and by how much
// each moves the clock.
func shiftsOf(loc *time.Location, from, to time.Time) (at []time.Time, deltas []time.Duration) {
	cur := from.In(loc)
	for {
		_, end := cur.ZoneBounds()
		if end.IsZero() || end.After(to) {
			return at, deltas
		}
		_, before := cur.Zone()
		_, after := end.Zone()
		at = append(at, end)
		if d := time.Duration(after-before) * time.Second; d != 0 {
			deltas = append(deltas, d.Abs())
		}
		cur = end
	}
}
