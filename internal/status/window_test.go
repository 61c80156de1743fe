package status

import (
	"strings"
	"testing"
	"time"

	"github.com/confighash/confighash/internal/contract"
	"github.com/confighash/confighash/internal/window"
)

// TestClassifyWindow: a stale workload whose rollout window is closed, or
// that a freeze holds, is waiting, with window.Decide's reason and
// instant; an urgent source leaves it stale and says so; nothing else
// changes.
func TestClassifyWindow(t *testing.T) {
	saturday := time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC)
	weekdays := map[string]string{contract.WindowAnnotation: "Mon-Fri 09:00-17:00 UTC"}
	src := func(annotations map[string]string) []Source {
		return []Source{{Kind: "ConfigMap", Name: "app", Presence: Present, windowAnnotations: annotations}}
	}
	stale := func(ns map[string]string, sources []Source) Workload {
		return Workload{Injection: Injection{State: InjectionOn}, StampedChecksum: "v2:k:aa", ExpectedChecksum: "v2:k:bb",
			namespaceWindowAnnotations: ns, Sources: sources}
	}
	freeze, err := window.ParseFreezes("2026-12-01/2026-12-10 UTC")
	if err != nil {
		t.Fatal(err)
	}
	tests := map[string]struct {
		w          Workload
		cluster    window.Cluster
		want       State
		wantReason string
		wantUntil  time.Time
		wantUrgent []string
	}{
		"namespace window closed": {w: stale(weekdays, src(nil)), want: StateWaiting,
			wantReason: `waiting for window "Mon-Fri 09:00-17:00 UTC" (the namespace) — may start at 2026-12-07T09:00:00Z`,
			wantUntil:  time.Date(2026, 12, 7, 9, 0, 0, 0, time.UTC)},
		"cluster freeze": {w: stale(nil, src(nil)), cluster: window.Cluster{Freezes: freeze}, want: StateWaiting,
			wantReason: `waiting: frozen by "2026-12-01/2026-12-10 UTC" (--freeze) until 2026-12-11T00:00:00Z; the stamp is out of date`,
			wantUntil:  time.Date(2026, 12, 11, 0, 0, 0, 0, time.UTC)},
		"cluster freeze, then the namespace window": {w: stale(weekdays, src(nil)), cluster: window.Cluster{Freezes: freeze}, want: StateWaiting,
			wantReason: `waiting: frozen by "2026-12-01/2026-12-10 UTC" (--freeze) until 2026-12-11T00:00:00Z — may start at 2026-12-11T09:00:00Z; the stamp`,
			wantUntil:  time.Date(2026, 12, 11, 9, 0, 0, 0, time.UTC)},
		"urgent source": {w: stale(weekdays, src(map[string]string{contract.UrgentAnnotation: "CVE fix"})), want: StateStale,
			wantReason: "urgent: configmap/app marked " + contract.UrgentAnnotation, wantUrgent: []string{"configmap/app"}},
		"window open": {w: stale(map[string]string{contract.WindowAnnotation: "Sat 10:00-14:00 UTC"}, src(nil)), want: StateStale,
			wantReason: "the stamp differs"},
		"current": {w: func() Workload { w := stale(weekdays, src(nil)); w.ExpectedChecksum = w.StampedChecksum; return w }(),
			want: StateCurrent, wantReason: "the stamp is what the sources give now"},
		"a halt comes first": {w: func() Workload {
			w := stale(weekdays, src(nil))
			w.HaltedChanges = []HaltedChange{{Source: "configmap/app", Workload: "deployment/other", Reason: "ProgressDeadline"}}
			return w
		}(), want: StateWaiting, wantReason: "change of configmap/app halted"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			state, reason := Classify(&tc.w, saturday, tc.cluster)
			if state != tc.want || !strings.Contains(reason, tc.wantReason) {
				t.Fatalf("%s: %s, want %s saying %q", state, reason, tc.want, tc.wantReason)
			}
			var until time.Time
			var urgent []string
			if tc.w.Window != nil {
				until, urgent = tc.w.Window.Until, tc.w.Window.Urgent
			}
			if !until.Equal(tc.wantUntil) || strings.Join(urgent, ",") != strings.Join(tc.wantUrgent, ",") {
				t.Errorf("window %+v, want until %s, urgent %q", tc.w.Window, tc.wantUntil, tc.wantUrgent)
			}
		})
	}
}

// TestClassifyWindowWarns: an annotation that cannot be read is a warning
// on the workload, and ignored, as the hook ignores it.
func TestClassifyWindowWarns(t *testing.T) {
	w := Workload{Injection: Injection{State: InjectionOn}, StampedChecksum: "v2:k:aa", ExpectedChecksum: "v2:k:bb",
		windowAnnotations: map[string]string{contract.WindowAnnotation: "weekdays"}}
	if state, reason := Classify(&w, time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC), window.Cluster{}); state != StateStale {
		t.Fatalf("%s: %s, want stale", state, reason)
	}
	if len(w.Warnings) != 1 || !strings.Contains(w.Warnings[0], contract.WindowAnnotation+" of the workload") {
		t.Errorf("warnings %q, want one naming the workload's %s", w.Warnings, contract.WindowAnnotation)
	}
}
