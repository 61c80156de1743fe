package status

import (
	"strings"
	"time"

	"github.com/confighash/confighash/internal/contract"
	"github.com/confighash/confighash/internal/window"
)

// Wait is what window.Decide says of a stale workload's next re-stamp, in
// the report's JSON schema: the hook starts it only while the rollout
// window of the workload (or of its namespace, or --rollout-window) and of
// its sources is open and no freeze holds it, unless a source is urgent.
type Wait struct {
	// Why names the closed window or the freeze, as written, and where
	// it is set (window.Decision's Why).
	Why string `json:"why,omitempty"`
	// Until is when the re-stamp may start; zero when no opening comes
	// within the year or so window.Decide looks ahead.
	Until time.Time `json:"until,omitzero"`
	// Urgent are the sources marked contract.UrgentAnnotation that let
	// it through a closed window or a freeze.
	Urgent []string `json:"urgent,omitempty"`
}

// windowAnnotations keeps of annotations those window.Decide reads, so a
// report holds no more of an object's metadata than it needs.
func windowAnnotations(annotations map[string]string) map[string]string {
	var out map[string]string
	for _, k := range []string{contract.WindowAnnotation, contract.FreezeAnnotation, contract.UrgentAnnotation} {
		if v, ok := annotations[k]; ok {
			if out == nil {
				out = map[string]string{}
			}
			out[k] = v
		}
	}
	return out
}

// windowInputs are window.Decide's inputs for w's next re-stamp. Status
// cannot tell which of the sources will change: it takes every source the
// hook would roll for (present, not ignored).
func windowInputs(w *Workload, cluster window.Cluster) window.Inputs {
	in := window.Inputs{Workload: w.windowAnnotations, Namespace: w.namespaceWindowAnnotations, Cluster: cluster,
		Sources: map[string]map[string]string{}}
	for i := range w.Sources {
		if s := &w.Sources[i]; s.Presence == Present && !s.Ignored {
			in.Sources[s.Ref()] = s.windowAnnotations
		}
	}
	return in
}

// waitOf is what d says of w's next re-stamp, nil when it may start now
// and no urgent source was needed for that.
func waitOf(d window.Decision) *Wait {
	if d.Go && len(d.Urgent) == 0 {
		return nil
	}
	return &Wait{Why: d.Why(), Until: d.Until, Urgent: d.Urgent}
}

// warningsOf are the annotations d could not read.
func warningsOf(d window.Decision) []string {
	warnings := make([]string, 0, len(d.Warnings))
	for _, err := range d.Warnings {
		warnings = append(warnings, err.Error())
	}
	return warnings
}

// windowReason explains a stale workload whose re-stamp d holds: a
// closed window, with when it opens, or a freeze, with its end, and when
// the re-stamp may start if that is later.
func windowReason(d window.Decision) string {
	what := "waiting for " + d.Held.Window()
	if d.Held.Frozen {
		what = "waiting: " + d.Held.String()
	}
	if !d.Held.Frozen || !d.Until.Equal(d.Held.Ends) {
		when := "no opening within the next year: the hook looks again later"
		if !d.Until.IsZero() {
			when = "may start at " + d.Until.UTC().Format(time.RFC3339)
		}
		what += " — " + when
	}
	return what +
		"; the stamp is out of date and the hook re-stamps it, with the sources' newest content, then"
}

// urgentNote is appended to a stale workload's reason when an urgent
// source lets its re-stamp through a closed window or a freeze.
func urgentNote(urgent []string) string {
	return "; urgent: " + strings.Join(urgent, ", ") + " marked " + contract.UrgentAnnotation +
		", so the re-stamp goes through the closed window or freeze now"
}
