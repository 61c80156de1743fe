package status

import (
	"fmt"

	"github.com/confighash/confighash/internal/contract"
	"github.com/confighash/confighash/internal/injection"
	"github.com/confighash/confighash/internal/workload"
)

// injectionOf decides whether the webhook stamps a workload with the given
// annotations in namespace ns, whose labels are nsLabels (nsErr when the
// namespace could not be read). The namespace part is the injection policy
// the webhook configuration, the handler and the hook apply; on top of it,
// the workload must not opt out. served is a namespaced-mode confighash's
// --namespaces.
func injectionOf(ns string, nsLabels map[string]string, nsErr error, annotations map[string]string, confighashNS string, served ...string) Injection {
	policy := injection.New(confighashNS, served...)
	switch {
	case workload.OptedOut(annotations):
		return Injection{InjectionOff, fmt.Sprintf("opted out by annotation %s=%s", contract.InjectionAnnotation, contract.InjectionDisabled)}
	case policy.Excluded(ns):
		return Injection{InjectionOff, policy.Decide(ns, nil).Reason}
	case nsErr != nil:
		return Injection{InjectionUnknown, fmt.Sprintf("cannot read namespace %s: %v", ns, nsErr)}
	}
	d := policy.Decide(ns, nsLabels)
	if d.Serves {
		return Injection{InjectionOn, d.Reason}
	}
	return Injection{InjectionOff, d.Reason}
}
