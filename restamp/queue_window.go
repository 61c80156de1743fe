package restamp

import (
	"fmt"
	"time"
)

// CoalesceWindowAnnotation on a workload's own metadata sets its coalescing
// window, e.g. "3s": a workload whose config is written in long steps can
// wait longer than the default, one that must roll at once can say "0s".
// Users set it; confighash only reads it.
const CoalesceWindowAnnotation = "confighash.dev/coalesce-window"

// ReasonInvalidAnnotation is the warning on a workload whose
// CoalesceWindowAnnotation cannot be used as it is.
const ReasonInvalidAnnotation = "InvalidAnnotation"

// windowOf is the coalescing window of a workload with annotations: def
// when it has no CoalesceWindowAnnotation. A value that is not a duration,
// or is negative, gives def and an error; one above maxWait gives maxWait
// and an error, since the cap would cut it short anyway.
func windowOf(annotations map[string]string, def, maxWait time.Duration) (time.Duration, error) {
	v, ok := annotations[CoalesceWindowAnnotation]
	if !ok {
		return def, nil
	}
	w, err := time.ParseDuration(v)
	switch {
	case err != nil:
		return def, fmt.Errorf("%s %q: using the default %s: %w", CoalesceWindowAnnotation, v, def, err)
	case w < 0:
		return def, fmt.Errorf("%s %q: negative; using the default %s", CoalesceWindowAnnotation, v, def)
	case w > maxWait:
		return maxWait, fmt.Errorf("%s %q: above the maximum wait; using %s", CoalesceWindowAnnotation, v, maxWait)
	}
	return w, nil
}
