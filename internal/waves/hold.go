package waves

import "github.com/confighash/confighash/internal/contract"

// HoldOpener reads a hold record's value, as HaltOpener does a halt's.
type HoldOpener func(value string) (contract.Hold, error)

// HoldState is what a workload's contract.HoldAnnotation amounts to.
type HoldState int

const (
	// NoHold means the workload carries none.
	NoHold HoldState = iota
	// HoldInForce means a hold the opener accepts: the workload waits, out of
	// the waves, until its sources have gone unchanged for the hold's quiet
	// time, then takes their latest content once.
	HoldInForce
	// HoldIgnored means a value the opener refuses: it holds nothing, since
	// honouring it would let whoever writes the workload keep it from its
	// config for good.
	HoldIgnored
)

// Hold is the meaning of one workload's contract.HoldAnnotation.
type Hold struct {
	State HoldState
	// Record is the hold, when State is HoldInForce.
	Record contract.Hold
	// Err is why the value was refused, when State is HoldIgnored.
	Err error
}

// HoldOf reads the hold annotation of a workload's own annotations.
func HoldOf(annotations map[string]string, open HoldOpener) Hold {
	v, ok := annotations[contract.HoldAnnotation]
	if !ok {
		return Hold{}
	}
	h, err := open(v)
	if err != nil {
		return Hold{State: HoldIgnored, Err: err}
	}
	return Hold{State: HoldInForce, Record: h}
}

// Waits reports whether the workload waits for its hold to end.
func (h Hold) Waits() bool { return h.State == HoldInForce }
