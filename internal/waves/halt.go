package waves

import (
	"slices"

	"github.com/confighash/confighash/internal/contract"
)

// HaltOpener reads a halt record's value: contract.ReadHalt under the key,
// for the hook; contract.ReadHaltUnverified, for `status` and `preview`,
// which have no key and so take a value only the key refuses as the hook's.
type HaltOpener func(value string) (contract.Halt, error)

// HaltState is what a workload's contract.HaltAnnotation amounts to.
type HaltState int

const (
	// NoHalt means the workload carries none.
	NoHalt HaltState = iota
	// HaltReleased means a user set it to contract.HaltReleased, a command and
	// not a record: the change goes on as if the rollout had succeeded, and
	// the workload holds nobody back.
	HaltReleased
	// HaltInForce means a halt the opener accepts: the changes it names are
	// held back from the source's other readers.
	HaltInForce
	// HaltIgnored means a value the opener refuses (unsealed, forged, copied,
	// too long, unreadable, dated ahead): it halts nothing.
	HaltIgnored
)

// Halt is the meaning of one workload's contract.HaltAnnotation.
type Halt struct {
	State HaltState
	// Record is the halt, when State is HaltInForce.
	Record contract.Halt
	// Err is why the value was refused, when State is HaltIgnored.
	Err error
}

// HaltOf reads the halt annotation of a workload's own annotations.
func HaltOf(annotations map[string]string, open HaltOpener) Halt {
	v, ok := annotations[contract.HaltAnnotation]
	switch {
	case !ok:
		return Halt{}
	case Released(annotations):
		return Halt{State: HaltReleased}
	}
	h, err := open(v)
	if err != nil {
		return Halt{State: HaltIgnored, Err: err}
	}
	return Halt{State: HaltInForce, Record: h}
}

// Released reports whether a workload's own annotations release its halt:
// contract.HaltReleased exactly, which needs no seal.
func Released(annotations map[string]string) bool {
	return annotations[contract.HaltAnnotation] == contract.HaltReleased
}

// Stops reports whether h holds change c back from the other readers of
// its source: in force and naming that very content. A halt of an earlier
// content of the source stops nothing: the change is the fix.
func (h Halt) Stops(c contract.Change) bool {
	return h.State == HaltInForce && h.Record.Has(c)
}

// Names reports whether h is in force and names a change of source, of
// any content: what a reader without the key, which cannot name the
// current content, takes to hold the source's change back.
func (h Halt) Names(source string) bool {
	return h.State == HaltInForce && slices.ContainsFunc(h.Record.Changes, func(c contract.Change) bool { return c.Source == source })
}

// Others lists, in order and each once, the sources other than source
// whose changes h halts: the workload carrying h is re-stamped for a change
// of source only once those are lifted or released, since its new pods
// would carry their halted content too.
func (h Halt) Others(source string) []string {
	if h.State != HaltInForce {
		return nil
	}
	var out []string
	for _, c := range h.Record.Changes {
		if c.Source != source && !slices.Contains(out, c.Source) {
			out = append(out, c.Source)
		}
	}
	return out
}
