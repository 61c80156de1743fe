package restamp

import (
	"fmt"
	"time"

	"github.com/confighash/confighash/internal/contract"
)

// windowOf is the coalescing window of a workload with annotations: def
// when it has no contract.CoalesceWindowAnnotation. A value that is not a duration,
// or is negative, gives def and an error; one above coalesceMax gives coalesceMax
// and an error, since the cap would cut it short anyway.
func windowOf(annotations map[string]string, def, coalesceMax time.Duration) (time.Duration, error) {
	v, ok := annotations[contract.CoalesceWindowAnnotation]
	if !ok {
		return def, nil
	}
	w, err := time.ParseDuration(v)
	switch {
	case err != nil:
		return def, fmt.Errorf("%s %q: using the default %s: %w", contract.CoalesceWindowAnnotation, v, def, err)
	case w < 0:
		return def, fmt.Errorf("%s %q: negative; using the default %s", contract.CoalesceWindowAnnotation, v, def)
	case w > coalesceMax:
		return coalesceMax, fmt.Errorf("%s %q: above the maximum wait; using %s", contract.CoalesceWindowAnnotation, v, coalesceMax)
	}
	return w, nil
}
