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
	// it is set (window.Decision.Why).
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

// waitOf decides w's window at now; nil when it may be re-stamped now and
// no urgent source was needed for that.
func waitOf(w *Workload, now time.Time, cluster window.Cluster) (*Wait, []string) {
	d := window.Decide(windowInputs(w, cluster), now)
	warnings := make([]string, 0, len(d.Warnings))
	for _, err := range d.Warnings {
		warnings = append(warnings, err.Error())
	}
	if d.Go && len(d.Urgent) == 0 {
		return nil, warnings
	}
	return &Wait{Why: d.Why, Until: d.Until, Urgent: d.Urgent}, warnings
}

// windowReason explains a stale workload whose window is closed.
func windowReason(wt *Wait) string {
	when := "no opening within the next year: the hook looks again later"
	if !wt.Until.IsZero() {
		when = "may start at " + wt.Until.UTC().Format(time.RFC3339)
	}
	what := "waiting: " + wt.Why
	if closed, ok := strings.CutSuffix(wt.Why, " is closed"); ok {
		what = "waiting for " + closed
	}
	if !strings.HasSuffix(what, wt.Until.UTC().Format(time.RFC3339)) {
		what += " — " + when // a freeze's Why says its end
	}
	return what +
		"; the stamp is out of date and the hook re-stamps it, with the sources' newest content, then"
}

// urgentNote is appended to a stale workload's reason when an urgent
// source lets its re-stamp through a closed window or a freeze.
func urgentNote(wt *Wait) string {
	return "; urgent: " + strings.Join(wt.Urgent, ", ") + " marked " + contract.UrgentAnnotation +
		", so the re-stamp goes through the closed window or freeze now"
}
