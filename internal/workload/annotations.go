package workload

import "github.com/confighash/confighash/internal/contract"

// OptedOut reports whether the workload carries the opt-out annotation.
func OptedOut(annotations map[string]string) bool {
	return annotations[contract.InjectionAnnotation] == contract.InjectionDisabled
}
