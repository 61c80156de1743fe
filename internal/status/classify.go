package status

import (
	"fmt"
	"strings"
	"time"

	"github.com/confighash/confighash/internal/contract"
	"github.com/confighash/confighash/internal/window"
)

// CheckInstallHint is appended to reasons that point at the installation.
const CheckInstallHint = "run `confighash status --check-install`"

// Classify works out w's State and Reason from the facts already in w:
// Injection, Sources, the two checksums, Error and the events. It does no
// I/O. The first rule that applies wins:
//
//   - not-injected: injection is off (namespace not labelled, namespace
//     excluded by the webhook, or the workload opted out);
//   - not-watched: the hook refuses to watch the workload's custom kind
//     (NotWatched), so whatever the stamp is now, it is never re-stamped;
//   - missing-source: a required source is absent; the hook does not roll a
//     workload whose pods could not start;
//   - halted: the workload carries the hook's halt (confighash.dev/halt),
//     not released: its rollout for a change failed, and it holds the
//     change back from the source's other readers (a halt that cannot be
//     read is halted too, as nobody can tell what it halts);
//   - unknown: the checksum the sources give now could not be obtained,
//     or the stamp was made under another HMAC key;
//   - stale: the stamp is not of the format confighash writes (a legacy v1
//     stamp; see formatReason);
//   - held: the stamp differs from it, and the workload carries the hook's
//     flap hold annotation (confighash.dev/hold);
//   - current: the stamp differs from it, and a source is ignored (see
//     ignoredReason);
//   - stale: the stamp differs from it (or there is no stamp yet);
//   - current: the stamp is what the sources give now.
//
// A stale workload (either rule) is waiting instead when a change of a
// source it reads is halted at another workload of its namespace
// (HaltedChanges): the hook keeps its stamp until the halt is lifted or
// released. A released halt decides nothing: the reason says it is there;
// nor does one that cannot be read, which the hook ignores too.
//
// A stale workload is waiting, too, when window.Decide says at now that a
// rollout window or a freeze holds its re-stamp (w.Window says until
// when); an urgent source that lets it through is noted in the reason.
func Classify(w *Workload, now time.Time, cluster window.Cluster) (State, string) {
	state, reason := classify(w)
	w.Window = nil
	switch {
	case state == StateStale && len(w.HaltedChanges) > 0:
		state, reason = StateWaiting, waitingReason(w.HaltedChanges)
	case state == StateStale:
		d := window.Decide(windowInputs(w, cluster), now)
		w.Warnings = append(w.Warnings, warningsOf(d)...)
		w.Window = waitOf(d)
		switch {
		case d.Go && len(d.Urgent) > 0:
			reason += urgentNote(d.Urgent)
		case !d.Go:
			state, reason = StateWaiting, windowReason(d)
		}
	}
	if w.Rollout != nil && w.Rollout.Failing != "" {
		reason += ";" + failingNote(w.Rollout.Failing)
	}
	switch {
	case w.Halt != nil && w.Halt.Released:
		reason += releasedNote
	case w.Halt != nil && w.Halt.Error != "":
		reason += "; its " + contract.HaltAnnotation + " cannot be read (" + w.Halt.Error + "), and the hook ignores it"
	}
	return state, reason
}

// classify applies Classify's rules, all but the waiting one.
func classify(w *Workload) (State, string) {
	if w.Injection.State == InjectionOff {
		return StateNotInjected, w.Injection.Reason
	}
	if w.NotWatched != "" {
		return StateNotWatched, "the hook does not watch this kind (" + w.NotWatched + "), so the workload is stamped " +
			"on create and update but never re-stamped when its ConfigMaps and Secrets change; fix the template path " +
			"(--workload-kind) or the CRD's schema"
	}
	if missing := missingRequired(w.Sources); len(missing) > 0 {
		return StateMissingSource, fmt.Sprintf("required %s missing; the hook does not roll it until %s",
			strings.Join(missing, ", "), pluralize(len(missing), "it exists", "they exist"))
	}
	if h := w.Halt; h.InForce() {
		return StateHalted, haltedReason(h)
	}
	if w.ExpectedChecksum == "" {
		if w.Error != "" {
			return StateUnknown, w.Error
		}
		return StateUnknown, "the current checksum could not be computed; " + CheckInstallHint
	}
	if state, reason := formatReason(w); state != "" {
		return state, reason
	}
	if w.StampedChecksum == w.ExpectedChecksum {
		return StateCurrent, "the stamp is what the sources give now"
	}
	if h := w.Hold; h != nil && h.Error == "" {
		return StateHeld, heldReason(h)
	}
	if state, reason := ignoredReason(w); state != "" {
		return state, reason
	}
	if w.StampedChecksum == "" {
		return StateStale, "not stamped: it predates injection or was written while the webhook was unreachable; " +
			"the hook stamps it when one of its sources changes, or when it restarts"
	}
	return StateStale, "the stamp differs from what the sources give now, so the pods may run older config; " +
		"the hook re-stamps it when one of its sources changes, or when it restarts"
}

// heldReason explains a flap hold.
func heldReason(h *Hold) string {
	return fmt.Sprintf("the stamp is out of date: its sources flap, and the hook has held the workload since %s "+
		"(backoff level %d); it takes their latest content, once, when they have not changed for %s",
		h.Since.UTC().Format("2006-01-02T15:04:05Z"), h.Level, h.Quiet)
}

// newer reports whether a exists and is newer than b (or b does not exist).
func newer(a, b *Event) bool {
	return a != nil && (b == nil || a.Time.After(b.Time))
}

// missingRequired lists the required sources known to be absent.
func missingRequired(sources []Source) []string {
	var out []string
	for i := range sources {
		if s := &sources[i]; !s.Optional && s.Presence == Absent {
			out = append(out, s.Ref())
		}
	}
	return out
}

func pluralize(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
