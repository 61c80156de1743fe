package status

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/confighash/confighash/workload"
)

// injectionOf decides whether the webhook stamps a workload with the given
// annotations in namespace ns, whose labels are nsLabels (nsErr when the
// namespace could not be read). It follows the webhook configuration: the
// namespace must carry the injection label and be neither kube-system nor
// confighash's own namespace, and the workload must not opt out.
func injectionOf(ns string, nsLabels map[string]string, nsErr error, annotations map[string]string, confighashNS string) Injection {
	switch {
	case workload.OptedOut(annotations):
		return Injection{InjectionOff, fmt.Sprintf("opted out by annotation %s=%s", workload.InjectionAnnotation, workload.InjectionDisabled)}
	case ns == metav1.NamespaceSystem || ns == confighashNS:
		return Injection{InjectionOff, fmt.Sprintf("namespace %s is excluded by the webhook's namespaceSelector", ns)}
	case nsErr != nil:
		return Injection{InjectionUnknown, fmt.Sprintf("cannot read namespace %s: %v", ns, nsErr)}
	case nsLabels[workload.InjectionLabel] == workload.InjectionEnabled:
		return Injection{InjectionOn, fmt.Sprintf("namespace %s is labelled %s=%s", ns, workload.InjectionLabel, workload.InjectionEnabled)}
	}
	return Injection{InjectionOff, fmt.Sprintf("namespace %s is not labelled %s=%s", ns, workload.InjectionLabel, workload.InjectionEnabled)}
}
