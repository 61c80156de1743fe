package window

import (
	"strings"
	"testing"
	"time"

	"github.com/confighash/confighash/internal/contract"
)

func windowOf(text string) map[string]string {
	return map[string]string{contract.WindowAnnotation: text}
}

func mustFreeze(t *testing.T, text string) Freeze {
	t.Helper()
	f, err := ParseFreeze(text)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// holdFields prints a Hold's fields, not its String.
type holdFields Hold

// Friday 4 December 2026, 18:00 UTC: after office hours in Berlin.
var friday = utc("2026-12-04T18:00:00Z")

// TestDecideWhichRuleHolds: each rule in Decide's order, what holds a
// change (Held, and its Why) and until when.
func TestDecideWhichRuleHolds(t *testing.T) {
	office := mustParse(t, "Mon-Fri 09:00-17:00 Europe/Berlin")
	evenings := "* 18:00-22:00 Europe/Berlin"
	holidays := mustFreeze(t, "2026-12-04/2026-12-08 Europe/Berlin")
	nsFreeze := "2026-12-04T17:00/2026-12-04T20:00 UTC"
	for _, c := range []struct {
		name  string
		in    Inputs
		go_   bool
		until string
		held  Hold
		why   string
	}{
		{name: "no window", in: Inputs{}, go_: true},
		{name: "the cluster's", in: Inputs{Cluster: Cluster{Window: &office}},
			until: "2026-12-07T08:00:00Z", held: Hold{By: ByFlag, Rule: office.String()},
			why: `window "Mon-Fri 09:00-17:00 Europe/Berlin" (--rollout-window) is closed`},
		{name: "the namespace's replaces the cluster's", in: Inputs{Namespace: windowOf(evenings), Cluster: Cluster{Window: &office}}, go_: true},
		{name: "the namespace's closed", in: Inputs{Namespace: windowOf("Sat 10:00-12:00 UTC"), Cluster: Cluster{Window: &office}},
			until: "2026-12-05T10:00:00Z", held: Hold{By: ByNamespace, Rule: "Sat 10:00-12:00 UTC"},
			why: `window "Sat 10:00-12:00 UTC" (the namespace) is closed`},
		{name: "the workload's replaces the namespace's", in: Inputs{Workload: windowOf("Sat 10:00-12:00 UTC"), Namespace: windowOf(evenings)},
			until: "2026-12-05T10:00:00Z", held: Hold{By: ByWorkload, Rule: "Sat 10:00-12:00 UTC"},
			why: `window "Sat 10:00-12:00 UTC" (the workload) is closed`},
		{name: "always opts a workload out", in: Inputs{Workload: windowOf(" always "), Namespace: windowOf("Sat 10:00-12:00 UTC"), Cluster: Cluster{Window: &office}}, go_: true},
		{name: "a source's window narrows the reader's", in: Inputs{Namespace: windowOf(evenings),
			Sources: map[string]map[string]string{"configmap/ca": windowOf("Mon-Fri 20:00-21:00 Europe/Berlin"), "secret/db": nil}},
			until: "2026-12-04T19:00:00Z", held: Hold{By: BySource, Source: "configmap/ca", Rule: "Mon-Fri 20:00-21:00 Europe/Berlin"},
			why: `window "Mon-Fri 20:00-21:00 Europe/Berlin" (configmap/ca) is closed`},
		{name: "windows that never meet give no instant", in: Inputs{Workload: windowOf("Mon 09:00-10:00 UTC"),
			Sources: map[string]map[string]string{"configmap/ca": windowOf("Tue 09:00-10:00 UTC")}},
			held: Hold{By: ByWorkload, Rule: "Mon 09:00-10:00 UTC"}, why: `window "Mon 09:00-10:00 UTC" (the workload) is closed`},
		// The freeze ends at midnight Tuesday into Wednesday (23:00 UTC);
		// the window opens at 09:00 Wednesday.
		{name: "the cluster's freeze, before its window", in: Inputs{Cluster: Cluster{Window: &office, Freezes: []Freeze{holidays}}},
			until: "2026-12-09T08:00:00Z", held: Hold{By: ByFlag, Rule: holidays.String(), Frozen: true, Ends: utc("2026-12-08T23:00:00Z")},
			why: `frozen by "2026-12-04/2026-12-08 Europe/Berlin" (--freeze) until 2026-12-08T23:00:00Z`},
		{name: "the namespace's freeze", in: Inputs{Namespace: map[string]string{contract.FreezeAnnotation: nsFreeze}},
			until: "2026-12-04T20:00:00Z", held: Hold{By: ByNamespace, Rule: nsFreeze, Frozen: true, Ends: utc("2026-12-04T20:00:00Z")},
			why: `frozen by "2026-12-04T17:00/2026-12-04T20:00 UTC" (the namespace) until 2026-12-04T20:00:00Z`},
		{name: "the namespace's freeze before the cluster's, and before a workload's window",
			in: Inputs{Workload: windowOf("Sat 10:00-12:00 UTC"), Namespace: map[string]string{contract.FreezeAnnotation: nsFreeze},
				Cluster: Cluster{Freezes: []Freeze{holidays}}},
			until: "2026-12-12T10:00:00Z", held: Hold{By: ByNamespace, Rule: nsFreeze, Frozen: true, Ends: utc("2026-12-04T20:00:00Z")},
			why: `frozen by "2026-12-04T17:00/2026-12-04T20:00 UTC" (the namespace) until 2026-12-04T20:00:00Z`},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := Decide(c.in, friday)
			if d.Go != c.go_ || len(d.Warnings) > 0 {
				t.Fatalf("Decide = %+v, want Go %v and no warnings", d, c.go_)
			}
			if got := d.Until; (c.until == "" && !got.IsZero()) || (c.until != "" && !got.Equal(utc(c.until))) {
				t.Errorf("Until = %s, want %q", got, c.until)
			}
			if why := d.Why(); why != c.why {
				t.Errorf("Why = %q, want %q", why, c.why)
			}
			if !d.Held.Ends.Equal(c.held.Ends) {
				t.Errorf("Held.Ends = %s, want %s", d.Held.Ends, c.held.Ends)
			}
			d.Held.Ends, c.held.Ends = time.Time{}, time.Time{}
			if d.Held != c.held {
				t.Errorf("Held = %+v, want %+v", holdFields(d.Held), holdFields(c.held))
			}
		})
	}
	ns := map[string]string{contract.FreezeAnnotation: nsFreeze}
	if d := Decide(Inputs{Namespace: ns}, utc("2026-12-04T20:00:00Z")); !d.Go || d.Held != (Hold{}) || d.Why() != "" {
		t.Errorf("at the end of the freeze: %+v; want Go, held by nothing", d)
	}
}

func TestDecideIgnoresWhatItCannotRead(t *testing.T) {
	d := Decide(Inputs{Workload: windowOf("weekdays 9-5"), Namespace: windowOf("Sat 10:00-12:00 UTC")}, friday)
	if d.Go || !d.Until.Equal(utc("2026-12-05T10:00:00Z")) {
		t.Errorf("a workload window that does not parse: %+v; want the namespace's", d)
	}
	if len(d.Warnings) != 1 || !strings.Contains(d.Warnings[0].Error(), "of the workload") {
		t.Errorf("warnings %v, want one naming the workload's annotation", d.Warnings)
	}
	d = Decide(Inputs{Namespace: map[string]string{contract.FreezeAnnotation: "2026-12-01/2026-12-31 UTC; someday"}}, friday)
	if d.Go || len(d.Warnings) != 1 {
		t.Errorf("a namespace with a good freeze and a bad one: %+v; want held by the good one, one warning", d)
	}
}

func TestDecideUrgent(t *testing.T) {
	office := mustParse(t, "Mon-Fri 09:00-17:00 Europe/Berlin")
	holidays := mustFreeze(t, "2026-12-04/2026-12-08 Europe/Berlin")
	in := Inputs{Cluster: Cluster{Window: &office, Freezes: []Freeze{holidays}}, Sources: map[string]map[string]string{
		"secret/tls":   {contract.UrgentAnnotation: "INC-4711 expired certificate"},
		"configmap/ui": nil,
	}}
	if d := Decide(in, friday); !d.Go || len(d.Urgent) != 1 || d.Urgent[0] != "secret/tls" {
		t.Errorf("urgent source through a freeze and a closed window: %+v; want Go, urgent secret/tls", d)
	}
	in.Sources["secret/tls"] = map[string]string{contract.UrgentAnnotation: ""}
	if d := Decide(in, friday); d.Go {
		t.Errorf("an empty urgent annotation let the change through: %+v", d)
	}
	in.Cluster = Cluster{}
	in.Sources["secret/tls"] = map[string]string{contract.UrgentAnnotation: "INC-4711"}
	if d := Decide(in, friday); !d.Go || len(d.Urgent) != 0 {
		t.Errorf("urgent source with nothing holding it: %+v; want Go with no urgent use to report", d)
	}
}
