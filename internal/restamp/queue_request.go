package restamp

import (
	"fmt"

	"k8s.io/apimachinery/pkg/types"
)

// Request names one workload to re-check.
type Request struct {
	// KindName is the workload kind's workload.Kind.Name, e.g. "Deployment"
	// or "Rollout.argoproj.io".
	KindName string
	types.NamespacedName
	// Recheck is true when the trigger is not a config change seen live:
	// the informers' replay at start-up, or the re-check of a workload that
	// was just written. Workloads without a stamp are left alone then: they
	// were there before injection was enabled (or were admitted while the
	// webhook was down), and are stamped only when their config next changes.
	Recheck bool
}

func (r Request) String() string {
	return fmt.Sprintf("%s %s", r.KindName, r.NamespacedName)
}
