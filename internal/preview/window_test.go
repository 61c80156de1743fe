package preview

import (
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"

	"github.com/confighash/confighash/internal/contract"
	"github.com/confighash/confighash/internal/window"
)

// TestComputeWindows: each reader that rolls says when, from window.Decide
// on its annotations, the namespace's, the input's and the cluster's; those
// whose window is closed go after the others in the waves, as the hook
// puts them.
func TestComputeWindows(t *testing.T) {
	saturday := time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC)
	monday := time.Date(2026, 12, 7, 9, 0, 0, 0, time.UTC)
	weekdays := map[string]string{contract.WindowAnnotation: "Mon-Fri 09:00-17:00 UTC"}
	live := cmState(t, map[string]string{"a": "1"}, nil)
	next := cmState(t, map[string]string{"a": "2"}, nil)
	objs := []*appsv1.Deployment{
		deployment("a", weekdays, envFrom("app")), // first by name, but its window is closed
		deployment("b", nil, envFrom("app")),
		deployment("c", map[string]string{contract.WindowAnnotation: window.Always}, envFrom("app")),
	}
	f := facts(t, &live, next, nil, objs...)
	f.Now = saturday
	rep := computed(t, f, 2)
	var got []string
	for _, r := range rep.Rolling {
		got = append(got, r.Name+string(rune('0'+r.Wave)))
	}
	if strings.Join(got, " ") != "b1 c2 a2" {
		t.Errorf("waves %v, want b1 c2 a2: the closed window last", got)
	}
	when := map[string]Rolling{}
	for _, r := range rep.Rolling {
		when[r.Name] = r
	}
	if a := when["a"]; a.When != `waits for window "Mon-Fri 09:00-17:00 UTC" (the workload) — at 2026-12-07T09:00:00Z` || !a.Later || !a.Until.Equal(monday) {
		t.Errorf("a: when %q, later %v, until %s", a.When, a.Later, a.Until)
	}
	if b := when["b"]; b.When != "now" || b.Later {
		t.Errorf("b: when %q, later %v; want now", b.When, b.Later)
	}

	// The namespace's freeze holds every reader: a workload's "always"
	// opts out of windows, not of freezes.
	f.NamespaceAnnotations = map[string]string{contract.FreezeAnnotation: "2026-12-01/2026-12-10 UTC"}
	rep = computed(t, f, 2)
	// a's own window opens after the freeze ends, and when says so.
	for _, r := range rep.Rolling {
		want := `frozen by "2026-12-01/2026-12-10 UTC" (the namespace) until 2026-12-11T00:00:00Z`
		if r.Name == "a" {
			want += " — at 2026-12-11T09:00:00Z"
		}
		if r.When != want || !r.Later {
			t.Errorf("%s: when %q, later %v; want %q", r.Name, r.When, r.Later, want)
		}
	}

	// The input marked urgent: every reader goes now, and says why.
	f.SourceAnnotations = map[string]string{contract.UrgentAnnotation: "CVE-2026-0001"}
	rep = computed(t, f, 2)
	got = nil
	for _, r := range rep.Rolling {
		got = append(got, r.Name+string(rune('0'+r.Wave)))
		if !strings.HasPrefix(r.When, "urgent: goes now") || !strings.Contains(r.When, "configmap/app") || r.Later {
			t.Errorf("%s: when %q, later %v; want urgent through configmap/app", r.Name, r.When, r.Later)
		}
	}
	if strings.Join(got, " ") != "a1 b2 c2" {
		t.Errorf("urgent: waves %v, want a1 b2 c2", got)
	}

	// An annotation that cannot be read is a note, once, and ignored.
	f.SourceAnnotations, f.NamespaceAnnotations = nil, map[string]string{contract.WindowAnnotation: "weekdays"}
	rep = computed(t, f, 2)
	notes := 0
	if rep.Rolling[0].When != "now" {
		t.Errorf("%s: when %q, want now", rep.Rolling[0].Name, rep.Rolling[0].When)
	}
	for _, n := range rep.Notes {
		if strings.Contains(n, contract.WindowAnnotation+" of the namespace") {
			notes++
		}
	}
	if notes != 1 {
		t.Errorf("notes %q: want one about the namespace's %s", rep.Notes, contract.WindowAnnotation)
	}
}
