package preview

import (
	"slices"
	"strings"
	"time"

	"github.com/confighash/confighash/internal/contract"
	"github.com/confighash/confighash/internal/window"
)

// windowOf is window.Decide for the hook's re-stamp of r for this change:
// r's window, its namespace's or --rollout-window, the input's own window,
// the freezes, and the input's urgency, at f.Now.
func (f *Facts) windowOf(r Reader) window.Decision {
	return window.Decide(window.Inputs{Workload: r.Annotations, Namespace: f.NamespaceAnnotations, Cluster: f.Windows,
		Sources: map[string]map[string]string{f.Source.String(): f.SourceAnnotations}}, f.Now)
}

// setWhen fills roll's When, Later, Until and Urgent from d.
func setWhen(roll *Rolling, d window.Decision) {
	roll.Urgent = d.Urgent
	switch {
	case d.Go && len(d.Urgent) > 0:
		roll.When = "urgent: goes now through the closed window or freeze (" + strings.Join(d.Urgent, ", ") + " marked " + contract.UrgentAnnotation + ")"
	case d.Go:
		roll.When = "now"
	default:
		roll.Later, roll.Until = true, d.Until
		at := "no opening within the next year: the hook looks again later"
		if !d.Until.IsZero() {
			at = d.Until.UTC().Format(time.RFC3339)
		}
		switch h := d.Held; {
		case !h.Frozen:
			roll.When = "waits for " + h.Window() + " — at " + at
		case d.Until.Equal(h.Ends):
			roll.When = h.String() // it says the freeze's end
		default:
			roll.When = h.String() + " — at " + at
		}
	}
}

// windowNotes are the annotations window.Decide could not read, once each.
func windowNotes(notes []string, d window.Decision) []string {
	for _, err := range d.Warnings {
		if n := err.Error(); !slices.Contains(notes, n) {
			notes = append(notes, n)
		}
	}
	return notes
}
