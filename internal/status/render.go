package status

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"k8s.io/apimachinery/pkg/util/duration"

	"github.com/confighash/confighash/internal/termtext"
)

// TableOptions adjust WriteTable.
type TableOptions struct {
	// AllNamespaces adds a NAMESPACE column.
	AllNamespaces bool
	// Details adds, below the table, each workload's sources, checksums and
	// last events; meant for named workloads.
	Details bool
	// Now is what ages are measured from.
	Now time.Time
}

// WriteTable renders r for people: one row per workload and, with Details,
// a section per workload below.
func WriteTable(out io.Writer, r *Report, o TableOptions) error {
	tw := newTabWriter(out)
	header := "WORKLOAD\tINJECTION\tSTATE\tSOURCES\tCONFIG CHANGED\tREASON"
	if o.AllNamespaces {
		header = "NAMESPACE\t" + header
	}
	fmt.Fprintln(tw, header)
	for i := range r.Workloads {
		w := &r.Workloads[i]
		row := fmt.Sprintf("%s\t%s\t%s\t%s\t%s\t%s", w.Ref(), w.Injection.State, w.State,
			sourceCount(w.Sources), ago(w.LastConfigChanged, o.Now), termtext.OneLine(w.Reason))
		if o.AllNamespaces {
			row = w.Namespace + "\t" + row
		}
		fmt.Fprintln(tw, row)
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("writing table: %w", err)
	}
	if !o.Details {
		return nil
	}
	for i := range r.Workloads {
		if err := writeDetails(out, &r.Workloads[i], o.Now); err != nil {
			return err
		}
	}
	return nil
}

// writeDetails writes one workload's section.
func writeDetails(out io.Writer, w *Workload, now time.Time) error {
	tw := newTabWriter(out)
	fmt.Fprintf(tw, "\n%s in namespace %s\n", w.Ref(), w.Namespace)
	fmt.Fprintf(tw, "  Injection:\t%s: %s\n", w.Injection.State, termtext.OneLine(w.Injection.Reason))
	fmt.Fprintf(tw, "  State:\t%s: %s\n", w.State, termtext.OneLine(w.Reason))
	fmt.Fprintf(tw, "  Stamped checksum:\t%s\n", orNone(w.StampedChecksum))
	fmt.Fprintf(tw, "  Expected checksum:\t%s\n", orNone(w.ExpectedChecksum))
	fmt.Fprintf(tw, "  Flap hold:\t%s\n", describeHold(w.Hold))
	fmt.Fprintf(tw, "  Halt:\t%s\n", describeHalt(w.Halt))
	for _, hc := range w.HaltedChanges {
		fmt.Fprintf(tw, "  Halted change:\t%s at %s (%s since %s)\n", hc.Source, hc.Workload, termtext.OneLine(hc.Reason), hc.Since.UTC().Format(time.RFC3339))
	}
	fmt.Fprintf(tw, "  Last re-stamp:\t%s\n", describeRollout(w.Rollout, now))
	if w.Pinning != nil {
		fmt.Fprintf(tw, "  Pinning:\t%s\n", describePinning(w.Pinning))
	}
	for _, e := range []struct {
		label string
		ev    *Event
	}{{"Last ConfigChanged", w.LastConfigChanged}, {"Last FlapHold", w.LastFlapHold}, {"Last SourceMissing", w.LastSourceMissing}} {
		fmt.Fprintf(tw, "  %s:\t%s\n", e.label, describeEvent(e.ev, now))
	}
	for _, warning := range w.Warnings {
		fmt.Fprintf(tw, "  Warning:\t%s\n", termtext.OneLine(warning))
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("writing details: %w", err)
	}
	if len(w.Sources) == 0 {
		_, err := fmt.Fprintln(out, "  Sources:  none (the pod template reads no ConfigMap or Secret)")
		return err
	}
	tw = newTabWriter(out)
	fmt.Fprintln(tw, "  SOURCE\tKEYS\tOPTIONAL\tPRESENCE")
	for i := range w.Sources {
		s := &w.Sources[i]
		presence := string(s.Presence)
		if s.Ignored {
			presence += ", ignored"
		}
		if s.Error != "" {
			presence += " (" + termtext.OneLine(s.Error) + ")"
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", s.Ref(), strings.Join(s.Keys, ","), yesNo(s.Optional), presence)
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("writing sources: %w", err)
	}
	return nil
}

// WriteJSON writes v (a Report or an InstallReport) as indented JSON.
func WriteJSON(out io.Writer, v any) error {
	enc := json.NewEncoder(out)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("writing json: %w", err)
	}
	return nil
}

// WriteInstallTable renders the checks one per line, ok or FAIL first.
func WriteInstallTable(out io.Writer, r *InstallReport) error {
	tw := newTabWriter(out)
	for _, c := range r.Checks {
		mark := "FAIL"
		if c.OK {
			mark = "ok  " // as wide as FAIL, so all-ok output aligns the same
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", mark, c.Name, termtext.OneLine(c.Detail))
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("writing checks: %w", err)
	}
	return nil
}

func newTabWriter(out io.Writer) *tabwriter.Writer {
	return tabwriter.NewWriter(out, 0, 8, 3, ' ', 0)
}

// sourceCount is "present/total".
func sourceCount(sources []Source) string {
	present := 0
	for i := range sources {
		if sources[i].Presence == Present {
			present++
		}
	}
	return fmt.Sprintf("%d/%d", present, len(sources))
}

func ago(e *Event, now time.Time) string {
	if e == nil {
		return "<none>"
	}
	return duration.HumanDuration(now.Sub(e.Time)) + " ago"
}

func describeEvent(e *Event, now time.Time) string {
	if e == nil {
		return "<none>"
	}
	count := ""
	if e.Count > 1 {
		count = fmt.Sprintf(", %d times", e.Count)
	}
	return fmt.Sprintf("%s (%s%s) %s: %s", e.Time.UTC().Format(time.RFC3339), ago(e, now), count, e.Type, termtext.OneLine(e.Message))
}

func describeHold(h *Hold) string {
	switch {
	case h == nil:
		return "<none>"
	case h.Error != "":
		return "ignored: " + termtext.OneLine(h.Error)
	}
	return fmt.Sprintf("since %s, level %d, released after %s without a change%s", h.Since.UTC().Format(time.RFC3339), h.Level, h.Quiet, sealNote(h.Sealed))
}

// sealNote ends the line of a sealed record: status has no key to check
// the seal with (the hook does, and ignores a record whose seal fails).
func sealNote(sealed bool) string {
	if sealed {
		return " (sealed, unverified)"
	}
	return ""
}

// describeHalt is the Halt line of the details.
func describeHalt(h *Halt) string {
	switch {
	case h == nil:
		return "<none>"
	case h.Released:
		return "released by hand: it holds back no change"
	case h.Error != "":
		return "ignored: " + termtext.OneLine(h.Error)
	}
	return fmt.Sprintf("since %s, %s, for %s%s", h.Since.UTC().Format(time.RFC3339), termtext.OneLine(h.Reason), strings.Join(h.Sources(), ", "), sealNote(h.Sealed))
}

// describeRollout is the Last re-stamp line of the details.
func describeRollout(r *Rollout, now time.Time) string {
	switch {
	case r == nil:
		return "<none>"
	case r.Error != "":
		return "ignored: " + termtext.OneLine(r.Error)
	}
	return fmt.Sprintf("%s (%s ago) for %s%s%s", r.Since.UTC().Format(time.RFC3339), duration.HumanDuration(now.Sub(r.Since)),
		strings.Join(sourcesOfChanges(r.Changes), ", "), failingNote(termtext.OneLine(r.Failing)), sealNote(r.Sealed))
}

func orNone(s string) string {
	if s == "" {
		return "<none>"
	}
	return s
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
