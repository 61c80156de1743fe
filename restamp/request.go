package restamp

import (
	"fmt"

	"k8s.io/apimachinery/pkg/types"
)

// Request names one workload to re-check.
type Request struct {
	// Kind is the workload kind, e.g. "Deployment".
	Kind string
	types.NamespacedName
	// Startup is true when the trigger is the informers' initial list, not a
	// change seen live. Workloads without a stamp are left alone then: they
	// were there before injection was enabled, and admission promises not to
	// roll them until their config next changes.
	Startup bool
}

func (r Request) String() string {
	return fmt.Sprintf("%s %s", r.Kind, r.NamespacedName)
}
