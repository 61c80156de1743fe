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
	// Held is the rule that holds it: the first freeze in force, else the
	// first closed window. Set when Go is false.
	Held Hold
	// Urgent names the changed sources whose contract.UrgentAnnotation let
	// it through a closed window or a freeze; set only when one did.
	Urgent []string
	// Warnings are annotations that could not be read, each ignored as if
	// unset.
	Warnings []error
}

// Why says what holds d, for Events and logs: Held's String.
func (d Decision) Why() string { return d.Held.String() }

// Place is where the rule holding a change is set.
type Place int

const (
	// ByWorkload is the reader's own window annotation.
	ByWorkload Place = iota + 1
	// ByNamespace is its namespace's window or freeze annotation.
	ByNamespace
	// ByFlag is --rollout-window or --freeze.
	ByFlag
	// BySource is a changed source's window annotation.
	BySource
)

// Hold is the one rule that holds a change: a closed window or a freeze,
// and where it is set.
type Hold struct {
	// By is where the rule is set; Source names the changed source
	// ("configmap/NAME") when By is BySource.
	By     Place
	Source string
	// Rule is the window or the freeze, as written.
	Rule string
	// Frozen: Rule is a freeze, in force until Ends.
	Frozen bool
	Ends   time.Time
}

// Where says where h's rule is set, as a reader of an Event or a report
// finds it: "the workload", "the namespace", the flag, or the source.
func (h Hold) Where() string {
	switch h.By {
	case ByWorkload:
		return "the workload"
	case ByNamespace:
		return "the namespace"
	case ByFlag:
		if h.Frozen {
			return "--freeze"
		}
		return "--rollout-window"
	case BySource:
		return h.Source
	}
	return ""
}

// String says what h is: a freeze and its end, or a closed window; ""
// for the zero Hold.
func (h Hold) String() string {
	switch {
	case h.By == 0:
		return ""
	case h.Frozen:
		return fmt.Sprintf("frozen by %q (%s) until %s", h.Rule, h.Where(), h.Ends.UTC().Format(time.RFC3339))
	}
	return h.Window() + " is closed"
}

// Window names h's rule as a window and where it is set: `window "R"
// (where)`, as Events, status and preview all say it.
func (h Hold) Window() string {
	return fmt.Sprintf("window %q (%s)", h.Rule, h.Where())
}

// rule is one schedule or freeze that applies, and where it was set.
type rule struct {
	by       Place
	source   string
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
	d.Held = closed.hold()
	d.Until = firstOpen(rules, now)
	return d
}

// rules lists what applies to in, recording each annotation that cannot
// be read as a warning.
func (d *Decision) rules(in Inputs) []rule {
	// Freezes first: when one holds, it is what Why names.
	var rules []rule
	for _, f := range d.freezes(in.Namespace, "the namespace") {
		rules = append(rules, rule{by: ByNamespace, freeze: &f})
	}
	for _, f := range in.Cluster.Freezes {
		rules = append(rules, rule{by: ByFlag, freeze: &f})
	}
	switch s, ok := d.schedule(in.Workload, "the workload"); {
	case ok:
		rules = append(rules, rule{by: ByWorkload, schedule: s})
	default:
		if s, ok := d.schedule(in.Namespace, "the namespace"); ok {
			rules = append(rules, rule{by: ByNamespace, schedule: s})
		} else if in.Cluster.Window != nil {
			rules = append(rules, rule{by: ByFlag, schedule: in.Cluster.Window})
		}
	}
	for _, src := range slices.Sorted(maps.Keys(in.Sources)) {
		if s, ok := d.schedule(in.Sources[src], src); ok {
			rules = append(rules, rule{by: BySource, source: src, schedule: s})
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

// hold is r as the rule that holds a change.
func (r rule) hold() Hold {
	if r.freeze != nil {
		return Hold{By: r.by, Source: r.source, Rule: r.freeze.String(), Frozen: true, Ends: r.freeze.To()}
	}
	return Hold{By: r.by, Source: r.source, Rule: r.schedule.String()}
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
