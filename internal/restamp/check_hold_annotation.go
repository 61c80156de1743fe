package restamp

import (
	"time"

	"github.com/confighash/confighash/internal/contract"
)

// holdSince is the Since of a hold that begins at now: whole seconds, so
// that it survives the annotation unchanged.
func holdSince(now time.Time) time.Time {
	return now.UTC().Truncate(time.Second)
}

// storedHold reads the hold a workload carries, if any. An annotation that
// cannot be read still means someone meant a hold; the hook then holds at
// the first level from now, which ends in one quiet time at most.
func storedHold(annotations map[string]string, now time.Time) (*contract.Hold, error) {
	v, ok := annotations[contract.HoldAnnotation]
	if !ok {
		return nil, nil
	}
	h, err := contract.ParseHold(v)
	if err != nil {
		return &contract.Hold{Since: holdSince(now)}, err
	}
	return &h, nil
}
