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
	// Error says why the annotation could not be read.
	Error string `json:"error,omitempty"`
}

// rolloutOf reads the rollout record from a workload's annotations; nil
// when there is none.
func rolloutOf(annotations map[string]string) *Rollout {
	v, ok := annotations[contract.RolloutAnnotation]
	if !ok {
		return nil
	}
	r, err := contract.ParseRollout(v)
	if err != nil {
		return &Rollout{Error: err.Error()}
	}
	return &Rollout{Since: r.Since, Changes: changeStrings(r.Changes)}
}
