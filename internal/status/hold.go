package status

import (
	"errors"
	"time"

	"github.com/confighash/confighash/internal/contract"
	"github.com/confighash/confighash/internal/waves"
)

// Hold is the hook's flap hold on a workload, as the workload's
// contract.HoldAnnotation records it, in the report's JSON schema (Quiet as
// a duration string, Error for a value that cannot be read). It is a view:
// contract.ParseHold is the one reader of the annotation. The annotation,
// not an Event, is what the hook itself goes by (a new leader honours it),
// so it is what `held` is decided on.
type Hold struct {
	// Since is when the hold began.
	Since time.Time `json:"since"`
	// Level is the backoff level; each level doubles Quiet.
	Level int `json:"level"`
	// Quiet is how long the sources must go unchanged before the hook
	// re-stamps the workload, once, with their latest content.
	Quiet string `json:"quiet"`
	// Sealed: as Rollout.Sealed; shown unverified.
	Sealed bool `json:"sealed,omitempty"`
	// Error says why the annotation could not be read, or that it is not
	// sealed; the hook ignores it either way, and the workload is not held.
	Error string `json:"error,omitempty"`
}

// holdOf reads the hold from a workload's annotations, as of now; nil when
// there is none. waves.HoldOf decides, as for the hook, but without the
// key, as haltOf.
func holdOf(annotations map[string]string, now time.Time) *Hold {
	h := waves.HoldOf(annotations, func(v string) (contract.Hold, error) { return contract.ReadHoldUnverified(v, now, 0) })
	switch h.State {
	case waves.NoHold:
		return nil
	case waves.HoldIgnored:
		if errors.Is(h.Err, contract.ErrRecordUnsealed) {
			return &Hold{Error: unsealedNote}
		}
		return &Hold{Sealed: contract.Sealed(annotations[contract.HoldAnnotation]), Error: h.Err.Error()}
	}
	return &Hold{Since: h.Record.Since, Level: h.Record.Level, Quiet: h.Record.Quiet.String(), Sealed: true}
}
