package workload

import (
	"testing"
	"unsafe"

	appsv1 "k8s.io/api/apps/v1"
)

// TestSlimObjectHoldsRepeatedWordsOnce: two Deployments of one namespace,
// decoded apart (each string its own allocation), share one copy of the
// namespace's name and of their conditions' words once slimmed.
func TestSlimObjectHoldsRepeatedWordsOnce(t *testing.T) {
	k := kindNamed(t, "Deployment")
	a := k.SlimObject(smallDeployment()).(*appsv1.Deployment)
	b := k.SlimObject(smallDeployment()).(*appsv1.Deployment)
	same := func(what, x, y string) {
		t.Helper()
		if x != y {
			t.Fatalf("fixture: %s %q and %q", what, x, y)
		}
		if unsafe.StringData(x) != unsafe.StringData(y) {
			t.Errorf("each slimmed Deployment holds its own copy of its %s", what)
		}
	}
	same("namespace", a.Namespace, b.Namespace)
	ca, cb := a.Status.Conditions[0], b.Status.Conditions[0]
	same("condition type", string(ca.Type), string(cb.Type))
	same("condition status", string(ca.Status), string(cb.Status))
	same("condition reason", ca.Reason, cb.Reason)
}
