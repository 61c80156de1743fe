package status

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/confighash/confighash/internal/contract"
	"github.com/confighash/confighash/internal/window"
)

func TestClassify(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	on := Injection{InjectionOn, "namespace x is labelled"}
	present := []Source{
		{Kind: "ConfigMap", Name: "cfg", Keys: []string{AllKeys}, Presence: Present},
		{Kind: "Secret", Name: "sec", Keys: []string{"password"}, Presence: Present},
	}
	withPresence := func(kind, name string, optional bool, p Presence) []Source {
		out := append([]Source(nil), present...)
		return append(out, Source{Kind: kind, Name: name, Keys: []string{AllKeys}, Optional: optional, Presence: p})
	}
	changed := &Event{Type: corev1.EventTypeNormal, Reason: contract.ReasonConfigChanged, Time: t0}
	holdAfter := &Event{Type: corev1.EventTypeWarning, Reason: contract.ReasonFlapHold, Time: t0.Add(time.Minute), Message: "holding for 5m0s"}
	holdBefore := &Event{Type: corev1.EventTypeWarning, Reason: contract.ReasonFlapHold, Time: t0.Add(-time.Minute)}
	missingAfterHold := &Event{Type: corev1.EventTypeWarning, Reason: contract.ReasonSourceMissing, Time: t0.Add(2 * time.Minute)}
	hold := &Hold{Since: t0.Add(time.Minute), Level: 1, Quiet: "2m0s"}
	halt := &Halt{Since: t0, Changes: []string{"configmap/cfg@0123456789abcdef"}, Reason: "CrashLoopBackOff"}
	haltedAt := []HaltedChange{{Source: "configmap/cfg", Workload: "deployment/canary", Reason: "CrashLoopBackOff", Since: t0}}

	tests := map[string]struct {
		w          Workload
		want       State
		wantReason string // substring
	}{
		"current": {
			w:    Workload{Injection: on, Sources: present, StampedChecksum: "v1:aa", ExpectedChecksum: "v1:aa"},
			want: StateCurrent,
		},
		"current, reading nothing": {
			w:    Workload{Injection: on, StampedChecksum: "v1:aa", ExpectedChecksum: "v1:aa"},
			want: StateCurrent,
		},
		"stale": {
			w:    Workload{Injection: on, Sources: present, StampedChecksum: "v1:00", ExpectedChecksum: "v1:aa", LastConfigChanged: changed},
			want: StateStale, wantReason: "differs",
		},
		"stale, never stamped": {
			w:    Workload{Injection: on, Sources: present, ExpectedChecksum: "v1:aa"},
			want: StateStale, wantReason: "not stamped",
		},
		"held: the workload carries the hook's hold": {
			w: Workload{Injection: on, Sources: present, StampedChecksum: "v1:00", ExpectedChecksum: "v1:aa",
				LastConfigChanged: changed, LastFlapHold: holdAfter, Hold: hold},
			want: StateHeld, wantReason: "held the workload since 2026-01-02T03:05:05Z (backoff level 1); it takes their latest content, once, when they have not changed for 2m0s",
		},
		"held without any event (a new leader honours the annotation)": {
			w:    Workload{Injection: on, StampedChecksum: "v1:00", ExpectedChecksum: "v1:aa", Hold: hold},
			want: StateHeld,
		},
		"stale: a hold annotation the hook ignores (unreadable, or not sealed) holds nothing": {
			w:    Workload{Injection: on, StampedChecksum: "v1:00", ExpectedChecksum: "v1:aa", Hold: &Hold{Error: "garbage"}},
			want: StateStale, wantReason: "the hook re-stamps it",
		},
		"stale: a FlapHold event without the annotation is a hold that ended": {
			w: Workload{Injection: on, StampedChecksum: "v1:00", ExpectedChecksum: "v1:aa",
				LastConfigChanged: changed, LastFlapHold: holdAfter},
			want: StateStale,
		},
		"held wins over a newer SourceMissing event": {
			w: Workload{Injection: on, StampedChecksum: "v1:00", ExpectedChecksum: "v1:aa",
				LastFlapHold: holdAfter, LastSourceMissing: missingAfterHold, Hold: hold},
			want: StateHeld,
		},
		"stale: FlapHold older than the last ConfigChanged": {
			w: Workload{Injection: on, StampedChecksum: "v1:00", ExpectedChecksum: "v1:aa",
				LastConfigChanged: changed, LastFlapHold: holdBefore},
			want: StateStale,
		},
		"stale: FlapHold not the newest confighash event": {
			w: Workload{Injection: on, StampedChecksum: "v1:00", ExpectedChecksum: "v1:aa",
				LastConfigChanged: changed, LastFlapHold: holdAfter, LastSourceMissing: missingAfterHold},
			want: StateStale,
		},
		"stale: a Normal FlapHold is not a hold": {
			w: Workload{Injection: on, StampedChecksum: "v1:00", ExpectedChecksum: "v1:aa",
				LastFlapHold: &Event{Type: corev1.EventTypeNormal, Reason: contract.ReasonFlapHold, Time: t0}},
			want: StateStale,
		},
		"current despite an old hold": {
			w:    Workload{Injection: on, StampedChecksum: "v1:aa", ExpectedChecksum: "v1:aa", LastFlapHold: holdAfter},
			want: StateCurrent,
		},
		"current while held: sources flapped back to the stamp": {
			w:    Workload{Injection: on, StampedChecksum: "v1:aa", ExpectedChecksum: "v1:aa", Hold: hold},
			want: StateCurrent,
		},
		"missing required source": {
			w:    Workload{Injection: on, Sources: withPresence("Secret", "db", false, Absent), StampedChecksum: "v1:aa", ExpectedChecksum: "v1:bb"},
			want: StateMissingSource, wantReason: "required secret/db missing",
		},
		"missing required source wins over a matching stamp": {
			w:    Workload{Injection: on, Sources: withPresence("ConfigMap", "x", false, Absent), StampedChecksum: "v1:aa", ExpectedChecksum: "v1:aa"},
			want: StateMissingSource,
		},
		"missing required source wins over unknown": {
			w:    Workload{Injection: on, Sources: withPresence("ConfigMap", "x", false, Absent), Error: "webhook down"},
			want: StateMissingSource,
		},
		"missing optional source is fine": {
			w:    Workload{Injection: on, Sources: withPresence("ConfigMap", "opt", true, Absent), StampedChecksum: "v1:aa", ExpectedChecksum: "v1:aa"},
			want: StateCurrent,
		},
		"unreadable required source is not missing": {
			w:    Workload{Injection: on, Sources: withPresence("Secret", "db", false, PresenceUnknown), StampedChecksum: "v1:aa", ExpectedChecksum: "v1:aa"},
			want: StateCurrent,
		},
		"not injected: namespace": {
			w:    Workload{Injection: Injection{InjectionOff, "namespace x is not labelled"}, StampedChecksum: "v1:00"},
			want: StateNotInjected, wantReason: "not labelled",
		},
		"not injected wins over a missing source": {
			w:    Workload{Injection: Injection{InjectionOff, "opted out"}, Sources: withPresence("Secret", "db", false, Absent)},
			want: StateNotInjected, wantReason: "opted out",
		},
		"unknown: webhook did not stamp": {
			w:    Workload{Injection: on, Sources: present, StampedChecksum: "v1:aa", Error: "the webhook did not stamp; " + CheckInstallHint},
			want: StateUnknown, wantReason: "--check-install",
		},
		"unknown without an error text": {
			w:    Workload{Injection: on, StampedChecksum: "v1:aa"},
			want: StateUnknown, wantReason: "--check-install",
		},
		"halted: its rollout failed, and its stamp is current": {
			w:    Workload{Injection: on, Sources: present, StampedChecksum: "v1:aa", ExpectedChecksum: "v1:aa", Halt: halt},
			want: StateHalted, wantReason: "its rollout for configmap/cfg failed (CrashLoopBackOff since 2026-01-02T03:04:05Z) " +
				"and holds back the change from the source's other readers",
		},
		"halted wins over stale and over a hold": {
			w:    Workload{Injection: on, Sources: present, StampedChecksum: "v1:00", ExpectedChecksum: "v1:aa", Halt: halt, Hold: hold},
			want: StateHalted,
		},
		"halted wins over unknown": {
			w:    Workload{Injection: on, Sources: present, StampedChecksum: "v1:aa", Error: "webhook down", Halt: halt},
			want: StateHalted,
		},
		"halted, of two changes": {
			w: Workload{Injection: on, StampedChecksum: "v1:aa", ExpectedChecksum: "v1:aa", Halt: &Halt{Since: t0, Reason: "RolloutTimeout",
				Changes: []string{"configmap/cfg@0123456789abcdef", "secret/sec@fedcba9876543210"}}},
			want: StateHalted, wantReason: "for configmap/cfg, secret/sec failed (RolloutTimeout since 2026-01-02T03:04:05Z) and holds back the change from the sources' other readers",
		},
		"halted: rolled back, its stamp older than the content": {
			w: Workload{Injection: on, Sources: present, StampedChecksum: "v1:00", ExpectedChecksum: "v1:aa", Halt: &Halt{Since: t0, Reason: "RolledBack",
				Changes: []string{"configmap/cfg@0123456789abcdef"}, Sealed: true}},
			want: StateHalted, wantReason: "rolled back (since 2026-01-02T03:04:05Z) to an earlier revision, whose pods read that revision's pinned config; " +
				"the hook does not roll it forward to the current content of configmap/cfg",
		},
		"missing required source wins over halted": {
			w:    Workload{Injection: on, Sources: withPresence("Secret", "db", false, Absent), StampedChecksum: "v1:aa", ExpectedChecksum: "v1:aa", Halt: halt},
			want: StateMissingSource,
		},
		"unreadable halt annotation: ignored, as the hook ignores it": {
			w:    Workload{Injection: on, Sources: present, StampedChecksum: "v1:aa", ExpectedChecksum: "v1:aa", Halt: &Halt{Error: "garbage"}},
			want: StateCurrent, wantReason: "cannot be read (garbage), and the hook ignores it",
		},
		"released halt: the state is the stamp's, and the reason says so": {
			w:    Workload{Injection: on, Sources: present, StampedChecksum: "v1:aa", ExpectedChecksum: "v1:aa", Halt: &Halt{Released: true}},
			want: StateCurrent, wantReason: "the stamp is what the sources give now; its halt (confighash.dev/halt) was released by hand",
		},
		"released halt on a stale workload": {
			w:    Workload{Injection: on, Sources: present, StampedChecksum: "v1:00", ExpectedChecksum: "v1:aa", Halt: &Halt{Released: true}},
			want: StateStale, wantReason: "released by hand",
		},
		"waiting: stale, and a change of its source is halted at another reader": {
			w:    Workload{Injection: on, Sources: present, StampedChecksum: "v1:00", ExpectedChecksum: "v1:aa", HaltedChanges: haltedAt},
			want: StateWaiting, wantReason: "waiting: change of configmap/cfg halted at deployment/canary (CrashLoopBackOff); " +
				"the stamp is out of date and the hook re-stamps it once the next change of configmap/cfg lifts the halt, or once it is released",
		},
		"waiting: never stamped": {
			w:    Workload{Injection: on, Sources: present, ExpectedChecksum: "v1:aa", HaltedChanges: haltedAt},
			want: StateWaiting, wantReason: "waiting: change of configmap/cfg halted",
		},
		"waiting on two halts": {
			w: Workload{Injection: on, Sources: present, StampedChecksum: "v1:00", ExpectedChecksum: "v1:aa", HaltedChanges: append(haltedAt,
				HaltedChange{Source: "secret/sec", Workload: "statefulset/db", Reason: "ProgressDeadlineExceeded", Since: t0})},
			want: StateWaiting, wantReason: "waiting: change of configmap/cfg halted at deployment/canary (CrashLoopBackOff), " +
				"change of secret/sec halted at statefulset/db (ProgressDeadlineExceeded); the stamp is out of date and the hook " +
				"re-stamps it once the next change of configmap/cfg, secret/sec lifts the halt",
		},
		"current despite a halted change: the reader already went": {
			w:    Workload{Injection: on, Sources: present, StampedChecksum: "v1:aa", ExpectedChecksum: "v1:aa", HaltedChanges: haltedAt},
			want: StateCurrent,
		},
		"held wins over waiting": {
			w:    Workload{Injection: on, Sources: present, StampedChecksum: "v1:00", ExpectedChecksum: "v1:aa", Hold: hold, HaltedChanges: haltedAt},
			want: StateHeld,
		},
		"unknown, not waiting: the stamp cannot be compared": {
			w:    Workload{Injection: on, Sources: present, StampedChecksum: "v1:00", Error: "webhook down", HaltedChanges: haltedAt},
			want: StateUnknown,
		},
		"unknown injection but stamped by the webhook": {
			w:    Workload{Injection: Injection{InjectionUnknown, "forbidden"}, StampedChecksum: "v1:aa", ExpectedChecksum: "v1:aa"},
			want: StateCurrent,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, reason := Classify(&tc.w, time.Time{}, window.Cluster{})
			if got != tc.want {
				t.Errorf("state = %s (%s), want %s", got, reason, tc.want)
			}
			if !strings.Contains(reason, tc.wantReason) {
				t.Errorf("reason %q does not contain %q", reason, tc.wantReason)
			}
			if reason == "" {
				t.Error("empty reason")
			}
		})
	}
}

func TestNeedsAttention(t *testing.T) {
	want := map[State]bool{
		StateCurrent: false, StateNotInjected: false, StateUnknown: false,
		StateStale: true, StateHeld: true, StateMissingSource: true,
		StateHalted: true, StateWaiting: true,
	}
	for s, w := range want {
		if s.NeedsAttention() != w {
			t.Errorf("%s.NeedsAttention() = %v, want %v", s, !w, w)
		}
	}
}
