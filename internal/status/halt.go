package status

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/confighash/confighash/internal/contract"
	"github.com/confighash/confighash/internal/waves"
)

// Halt is the hook's halt on a workload, as the workload's
// contract.HaltAnnotation records it, in the report's JSON schema: the
// changes whose rollout failed on it, when and why. It is a view:
// contract.ParseHalt is the one reader of the annotation. As with the flap
// hold, the annotation, not an Event, is what the hook goes by (a new
// leader honours it), so it is what `halted` and `waiting` are decided on.
type Halt struct {
	// Since is when the hook saw the rollout fail.
	Since time.Time `json:"since,omitzero"`
	// Changes are the halted changes, SOURCE@DIGEST (contract.Change): the
	// digest is keyed and tells one content from another, nothing more.
	Changes []string `json:"changes,omitempty"`
	// Reason is why the rollout failed, in one word (CrashLoopBackOff,
	// ProgressDeadlineExceeded, RolloutTimeout, ...).
	Reason string `json:"reason,omitempty"`
	// Released is true when a user set the annotation to
	// contract.HaltReleased: the change goes on as if the rollout had
	// succeeded, and the workload holds back nobody.
	Released bool `json:"released,omitempty"`
	// Sealed: as Rollout.Sealed; shown unverified, and taken to be in
	// force.
	Sealed bool `json:"sealed,omitempty"`
	// Error says why the annotation could not be read, or that it is not
	// sealed; the hook ignores it either way, and it holds nothing back.
	Error string `json:"error,omitempty"`
}

// InForce reports whether h holds back a change from other readers: it is
// there, sealed, readable and not released.
func (h *Halt) InForce() bool {
	return h != nil && !h.Released && h.Error == ""
}

// Sources are the sources of h's changes, in order, each once.
func (h *Halt) Sources() []string {
	return sourcesOfChanges(h.Changes)
}

// haltOf reads the halt from a workload's annotations, as of now (a halt
// dated ahead is refused, as the hook refuses it); nil when there is none.
// waves.HaltOf decides, as for the hook, but without the key: a halt that
// only the key refuses is shown in force, unverified.
func haltOf(annotations map[string]string, now time.Time) *Halt {
	h := waves.HaltOf(annotations, func(v string) (contract.Halt, error) { return contract.ReadHaltUnverified(v, now) })
	switch h.State {
	case waves.NoHalt:
		return nil
	case waves.HaltReleased:
		return &Halt{Released: true}
	case waves.HaltIgnored:
		if errors.Is(h.Err, contract.ErrRecordUnsealed) {
			return &Halt{Error: haltUnsealedNote}
		}
		return &Halt{Sealed: contract.Sealed(annotations[contract.HaltAnnotation]), Error: h.Err.Error()}
	}
	return &Halt{Since: h.Record.Since, Changes: changeStrings(h.Record.Changes), Reason: h.Record.Reason, Sealed: true}
}

// haltUnsealedNote is the Error of a halt the hook ignores for want of a
// seal. Unlike unsealedNote it does not say that the hook ignores it:
// Classify and describeHalt say so of every Error.
const haltUnsealedNote = "not sealed by confighash: written by hand, or before records were sealed"

// haltedReason explains the halt a workload carries.
func haltedReason(h *Halt) string {
	if h.Error != "" {
		return "it carries a halt (" + contract.HaltAnnotation + ") that cannot be read (" + h.Error + "), so which " +
			"change it halts cannot be told; set it to " + contract.HaltReleased + " to release it"
	}
	sources := strings.Join(h.Sources(), ", ")
	if h.Reason == waves.RolledBack {
		return fmt.Sprintf("rolled back (since %s) to an earlier revision, whose pods read that revision's pinned config; "+
			"the hook does not roll it forward to the current content of %s (and holds that change back from their other readers) "+
			"until one of them changes or %s is set to %s", h.Since.UTC().Format(time.RFC3339), sources, contract.HaltAnnotation, contract.HaltReleased)
	}
	return fmt.Sprintf("its rollout for %s failed (%s since %s) and holds back the change from the %s other readers, "+
		"which keep their stamp; the next change of %s lifts the halt, and setting %s to %s releases it",
		sources, h.Reason, h.Since.UTC().Format(time.RFC3339), pluralize(len(h.Sources()), "source's", "sources'"),
		sources, contract.HaltAnnotation, contract.HaltReleased)
}

// releasedNote is added to the reason of a workload whose halt was released.
const releasedNote = "; its halt (" + contract.HaltAnnotation + ") was released by hand, so it holds back no change"

func changeStrings(cs []contract.Change) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.String()
	}
	return out
}

// sourcesOfChanges gives the SOURCE part of SOURCE@DIGEST values, in
// order, each once.
func sourcesOfChanges(changes []string) []string {
	var out []string
	for _, c := range changes {
		src, _, _ := strings.Cut(c, "@")
		if !slices.Contains(out, src) {
			out = append(out, src)
		}
	}
	return out
}
