package window

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/confighash/confighash/internal/contract"
)

// Always is the schedule value that is open all the time: on a workload,
// it opts out of its namespace's or the cluster's window.
const Always = "always"

// maxFreezes bounds the freezes read from one annotation or flag.
const maxFreezes = 8

// How far Decide looks for the instant a change may start: schedules that
// seldom or never open together, or a freeze past lookAhead, give no
// instant, and the hook looks again later.
const (
	lookAhead = 400 * 24 * time.Hour
	maxSteps  = 64
)

// Cluster is what the flags set for every reader: a default window (zero:
// none) and freezes.
type Cluster struct {
	Window  *Schedule
	Freezes []Freeze
}

// Inputs is what decides whether a change may start rolling a reader now:
// the annotations of the reader, of its namespace and of each changed
// source (by "configmap/NAME"), and the cluster's settings.
type Inputs struct {
	Workload, Namespace map[string]string
	Sources             map[string]map[string]string
	Cluster             Cluster
}

// Decision says whether a change may start rolling a reader now, and if
// not, why and until when.
type Decision struct {
	// Go: it may start now.
	Go bool
	// Until is when it may start (zero: not within lookAhead). Set when
	// Go is false.
	Until time.Time
	// Why says what holds it, for Events, status and preview: the window
	// or freeze, as written, and where it is set.
	Why string
	// Urgent names the changed sources whose contract.UrgentAnnotation let
	// it through a closed window or a freeze; set only when one did.
	Urgent []string
	// Warnings are annotations that could not be read, each ignored as if
	// unset.
	Warnings []error
}

// rule is one schedule or freeze that applies, and where it was set.
type rule struct {
	where    string
	schedule *Schedule
	freeze   *Freeze
}

// Decide applies the rules, in this order:
//
//   - the reader's window: its own annotation, else its namespace's, else
//     the cluster's (the most specific replaces the others, so a team can
//     widen a cluster default for its namespace, and a workload can say
//     "always");
//   - each changed source's own window narrows that: the change starts
//     only when the reader's window and every changed source's are open;
//   - a freeze, of the namespace or of the cluster, holds every change
//     while it lasts;
//   - a changed source marked urgent (contract.UrgentAnnotation) lets the
//     change through all of them, now.
func Decide(in Inputs, now time.Time) Decision {
	var d Decision
	rules := d.rules(in)
	closed := blocking(rules, now)
	if closed == nil {
		d.Go = true
		return d
	}
	for _, src := range slices.Sorted(maps.Keys(in.Sources)) {
		if in.Sources[src][contract.UrgentAnnotation] != "" {
			d.Urgent = append(d.Urgent, src)
		}
	}
	if len(d.Urgent) > 0 {
		d.Go = true
		return d
	}
	d.Why = closed.describe()
	d.Until = firstOpen(rules, now)
	return d
}

// rules lists what applies to in, recording each annotation that cannot
// be read as a warning.
func (d *Decision) rules(in Inputs) []rule {
	// Freezes first: when one holds, it is what Why names.
	var rules []rule
	for _, f := range d.freezes(in.Namespace, "the namespace") {
		rules = append(rules, rule{where: "the namespace", freeze: &f})
	}
	for _, f := range in.Cluster.Freezes {
		rules = append(rules, rule{where: "--freeze", freeze: &f})
	}
	switch s, ok := d.schedule(in.Workload, "the workload"); {
	case ok:
		rules = append(rules, rule{where: "the workload", schedule: s})
	default:
		if s, ok := d.schedule(in.Namespace, "the namespace"); ok {
			rules = append(rules, rule{where: "the namespace", schedule: s})
		} else if in.Cluster.Window != nil {
			rules = append(rules, rule{where: "--rollout-window", schedule: in.Cluster.Window})
		}
	}
	for _, src := range slices.Sorted(maps.Keys(in.Sources)) {
		if s, ok := d.schedule(in.Sources[src], src); ok {
			rules = append(rules, rule{where: src, schedule: s})
		}
	}
	return rules
}

// schedule reads the window annotation of one object; ok is false when it
// has none that can be read ("always" is read as no window at all).
func (d *Decision) schedule(annotations map[string]string, where string) (*Schedule, bool) {
	text, set := annotations[contract.WindowAnnotation]
	if !set {
		return nil, false
	}
	if strings.TrimSpace(text) == Always {
		return nil, true
	}
	s, err := Parse(text)
	if err != nil {
		d.Warnings = append(d.Warnings, fmt.Errorf("%s of %s: %w; ignored", contract.WindowAnnotation, where, err))
		return nil, false
	}
	return &s, true
}

// freezes reads the freeze annotation of one object: freezes separated by
// ";". One that cannot be read is a warning; the others apply.
func (d *Decision) freezes(annotations map[string]string, where string) []Freeze {
	text := annotations[contract.FreezeAnnotation]
	if text == "" {
		return nil
	}
	fs, err := ParseFreezes(text)
	if err != nil {
		d.Warnings = append(d.Warnings, fmt.Errorf("%s of %s: %w; ignored", contract.FreezeAnnotation, where, err))
	}
	return fs
}

// ParseFreezes reads freezes separated by ";" (at most maxFreezes, MaxLen
// bytes in all). It returns those it could read, and an error naming the
// first it could not.
func ParseFreezes(text string) ([]Freeze, error) {
	if len(text) > MaxLen {
		return nil, fmt.Errorf("freezes of %d bytes: at most %d", len(text), MaxLen)
	}
	parts := strings.Split(text, ";")
	if len(parts) > maxFreezes {
		return nil, fmt.Errorf("%d freezes: at most %d", len(parts), maxFreezes)
	}
	var out []Freeze
	var first error
	for _, p := range parts {
		f, err := ParseFreeze(p)
		if err != nil {
			if first == nil {
				first = err
			}
			continue
		}
		out = append(out, f)
	}
	return out, first
}

// blocking is the first rule that holds a change at t, nil when none does.
func blocking(rules []rule, t time.Time) *rule {
	for i, r := range rules {
		if r.holds(t) {
			return &rules[i]
		}
	}
	return nil
}

func (r rule) holds(t time.Time) bool {
	if r.freeze != nil {
		return r.freeze.Active(t)
	}
	return r.schedule != nil && !r.schedule.Open(t)
}

// describe says what r is: a freeze and its end, or a closed window.
func (r rule) describe() string {
	if r.freeze != nil {
		return fmt.Sprintf("frozen by %q (%s) until %s", r.freeze.String(), r.where, r.freeze.To().UTC().Format(time.RFC3339))
	}
	return fmt.Sprintf("window %q (%s) is closed", r.schedule.String(), r.where)
}

// firstOpen is the first instant from t on at which no rule holds a
// change, zero when none comes within lookAhead or maxSteps. Each step
// moves past the rule holding then, to its freeze's end or its window's
// next opening.
func firstOpen(rules []rule, t time.Time) time.Time {
	end := t.Add(lookAhead)
	for range maxSteps {
		if !t.Before(end) {
			break
		}
		r := blocking(rules, t)
		if r == nil {
			return t
		}
		if r.freeze != nil {
			t = r.freeze.To()
			continue
		}
		next, ok := r.schedule.NextOpen(t)
		if !ok {
			return time.Time{}
		}
		t = next
	}
	return time.Time{}
}
