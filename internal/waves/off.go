package waves

import "github.com/confighash/confighash/internal/contract"

// Off reports whether annotations, a workload's own or a ConfigMap's or
// Secret's, opt out of the waves: exactly contract.WavesOff, as every
// confighash switch, so that a typo never silently lets a change past
// them. On a workload: it is re-stamped at once, outside the waves, and no
// halt holds it back. On a source: all its readers are, for its changes.
func Off(annotations map[string]string) bool {
	return annotations[contract.WavesAnnotation] == contract.WavesOff
}

// Pace is how a reader takes a change of one of its sources.
type Pace string

const (
	// InWaves means the reader goes in its place in the order, behind
	// the earlier waves, and a halt of the change holds it back.
	InWaves Pace = ""
	// AtOnceEverywhere means --max-wave-size=0: no waves at all.
	AtOnceEverywhere Pace = "no-waves"
	// AtOnceReader means the reader carries confighash.dev/waves=off.
	AtOnceReader Pace = "reader-waves-off"
	// AtOnceSource means the changed source carries confighash.dev/waves=off.
	AtOnceSource Pace = "source-waves-off"
	// AtOnceNoPod means a re-stamp of the reader starts no pod
	// (health.NothingToRun), so it is in no wave; a halt of the change
	// still holds it back.
	AtOnceNoPod Pace = "no-pod"
)

// PaceOf is how a reader (its own annotations) takes a change of a source
// (whether Off says so of the source as the change leaves it), with the
// hook's --max-wave-size and whether a re-stamp of the reader starts no pod.
func PaceOf(reader map[string]string, sourceOff bool, maxWaveSize int, noPod bool) Pace {
	switch {
	case maxWaveSize <= 0:
		return AtOnceEverywhere
	case Off(reader):
		return AtOnceReader
	case sourceOff:
		return AtOnceSource
	case noPod:
		return AtOnceNoPod
	}
	return InWaves
}

// HeldBackByHalts reports whether a halt of the change can hold a reader of
// this pace back: only the opt-outs of waves lift it.
func (p Pace) HeldBackByHalts() bool {
	return p == InWaves || p == AtOnceNoPod
}
