package app

import (
	"errors"
	"fmt"

	"github.com/confighash/confighash/internal/workload"
)

// workloadKinds is the registry of the kinds served: the built-in ones and
// those the --workload-kind values add. It is the one reading of that flag,
// for serve (through validate) and status alike, so that one value works
// for both.
func workloadKinds(values []string) (workload.Registry, error) {
	var custom []workload.Kind
	var errs []error
	for _, s := range values {
		k, err := workload.ParseKind(s)
		if err != nil {
			errs = append(errs, fmt.Errorf("--workload-kind: %w", err))
			continue
		}
		custom = append(custom, k)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	r, err := workload.NewRegistry(custom...)
	if err != nil {
		return nil, fmt.Errorf("--workload-kind: %w", err)
	}
	return r, nil
}
