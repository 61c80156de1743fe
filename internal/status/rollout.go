package status

import (
	"time"

	"github.com/confighash/confighash/internal/contract"
)

// Rollout is the hook's record of its last re-stamp of a workload, as the
// workload's contract.RolloutAnnotation records it, in the report's JSON
// schema; contract.ParseRollout is the one reader of the annotation. It
// explains a rollout and decides no state.
type Rollout struct {
	// Since is when the hook re-stamped the workload.
	Since time.Time `json:"since,omitzero"`
	// Changes are the changes it re-stamped the workload for,
	// SOURCE@DIGEST (contract.Change).
	Changes []string `json:"changes,omitempty"`
	// Sealed says the record carries confighash's seal (a MAC binding it
	// to this workload). Status cannot check the seal, which takes
	// confighash's key: a sealed record is shown unverified. The hook
	// ignores one without a seal, or whose seal does not verify.
	Sealed bool `json:"sealed,omitempty"`
	// Failing is why the workload was failing before this re-stamp (one
	// word, e.g. "ErrImagePull"): the hook did not judge its rollout, so
	// it was not the change's canary and halted nothing. Empty when it
	// was not failing.
	Failing string `json:"failing,omitempty"`
	// Error says why the annotation could not be read, or that it is not
	// sealed; the hook ignores it either way.
	Error string `json:"error,omitempty"`
}

// unsealedNote is the Error of a record the hook ignores for want of a
// seal.
const unsealedNote = "not sealed by confighash (written by hand, or before records were sealed): the hook ignores it"

// rolloutOf reads the rollout record from a workload's annotations; nil
// when there is none.
func rolloutOf(annotations map[string]string) *Rollout {
	v, ok := annotations[contract.RolloutAnnotation]
	if !ok {
		return nil
	}
	if !contract.Sealed(v) {
		return &Rollout{Error: unsealedNote}
	}
	r, err := contract.ParseRollout(contract.Unsealed(v))
	if err != nil {
		return &Rollout{Sealed: true, Error: err.Error()}
	}
	return &Rollout{Since: r.Since, Changes: changeStrings(r.Changes), Sealed: true, Failing: r.Failing}
}
