package preview

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/confighash/confighash/internal/termtext"
)

// WriteJSON writes r as indented JSON.
func WriteJSON(out io.Writer, r *Report) error {
	enc := json.NewEncoder(out)
	enc.SetIndent("", "  ")
	if err := enc.Encode(r); err != nil {
		return fmt.Errorf("writing json: %w", err)
	}
	return nil
}

// WriteTable renders r for people: the change, then the readers that roll
// wave by wave, then those that do not, with why.
func WriteTable(out io.Writer, r *Report) error {
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "Source:\t%s in namespace %s\n", r.Source, r.Namespace)
	fmt.Fprintf(tw, "Keys that change:\t%s\n", describeKeys(r.ChangedKeys))
	served := "served"
	if !r.Served {
		served = "not served"
	}
	fmt.Fprintf(tw, "Namespace:\t%s (%s)\n", served, termtext.OneLine(r.ServedReason))
	for _, n := range r.Notes {
		fmt.Fprintf(tw, "Note:\t%s\n", termtext.OneLine(n))
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("writing table: %w", err)
	}

	fmt.Fprintln(out)
	switch {
	case len(r.Rolling) == 0:
		fmt.Fprintln(out, "No workload rolls.")
	default:
		how := " at once"
		if r.Waves > 0 {
			how = fmt.Sprintf(", in %s of at most %d", count(r.Waves, "wave"), r.MaxWaveSize)
		}
		fmt.Fprintf(out, "%s %s%s:\n", count(len(r.Rolling), "workload"), verb(len(r.Rolling)), how)
		tw = tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "WAVE\tWORKLOAD\tORDER\tWHEN\tKEYS IT READS THAT CHANGE")
		for _, w := range r.Rolling {
			wave := strconv.Itoa(w.Wave)
			if w.AtOnce {
				wave = "at once"
			}
			if w.NoPod != "" {
				wave = "at once (" + termtext.OneLine(w.NoPod) + ")"
			}
			if w.Failing != "" {
				wave = "at once (failing: " + termtext.OneLine(w.Failing) + ")"
			}
			read := describeRead(w)
			if w.Pinned {
				read += "; pinned"
			}
			if w.Waits != "" {
				read += "; waits: " + termtext.OneLine(w.Waits)
			}
			fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\n", wave, w.Ref, w.Order, w.When, read)
		}
		if err := tw.Flush(); err != nil {
			return fmt.Errorf("writing table: %w", err)
		}
	}
	if len(r.NotRolling) == 0 {
		return nil
	}
	fmt.Fprintf(out, "\n%s %s %s and %s not roll:\n", count(len(r.NotRolling), "workload"), plural(len(r.NotRolling), "reads", "read"),
		r.Source, plural(len(r.NotRolling), "does", "do"))
	tw = tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "WORKLOAD\tWHY\tREASON")
	for _, w := range r.NotRolling {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", w.Ref, w.Why, termtext.OneLine(w.Reason))
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("writing table: %w", err)
	}
	return nil
}

// describeKeys lists key changes by kind of change: "changed: a, b; added: c".
func describeKeys(ks []KeyChange) string {
	if len(ks) == 0 {
		return "none"
	}
	var parts []string
	for _, c := range []Change{Changed, Added, Removed} {
		var names []string
		for _, k := range ks {
			if k.Change == c {
				names = append(names, k.Key)
			}
		}
		if len(names) > 0 {
			parts = append(parts, string(c)+": "+strings.Join(names, ", "))
		}
	}
	return strings.Join(parts, "; ")
}

// describeRead is describeKeys for one reader, which may roll with no key
// changed: it is not stamped yet (Reason), or the source is created with
// none of the keys it reads.
func describeRead(w Rolling) string {
	switch {
	case len(w.Keys) > 0:
		return describeKeys(w.Keys)
	case w.Reason != "":
		return "none (" + termtext.OneLine(w.Reason) + ")"
	}
	return "none (the source is created)"
}

func count(n int, noun string) string {
	return strconv.Itoa(n) + " " + plural(n, noun, noun+"s")
}

func verb(n int) string { return plural(n, "rolls", "roll") }

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
