package workload

import (
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// slimIdentity marks (slimmedKey) a workload IdentityObject made.
const slimIdentity = "identity"

// IsIdentity reports whether obj was made by IdentityObject: the cache
// holds nothing of it but its identity. ReadsOf reads it as SkipNotHeld.
func IsIdentity(obj client.Object) bool {
	return obj.GetAnnotations()[slimmedKey] == slimIdentity
}

// IdentityObject returns what the cache holds of obj, an object of kind k,
// in a namespace confighash does not serve (docs/security.md: such an
// object costs its identity): its name, namespace, UID and
// resourceVersion, its creation and deletion times, and the mark, in an
// empty object of its kind. Nothing a tenant writes in it is kept, so it
// costs the same whatever obj holds: a Deployment about 1.5 KB, most of
// it the empty struct (BenchmarkSlimObject). An object SlimObject or
// IdentityObject made, or of another kind, is returned as it is.
//
// The hook never reads a workload of an unserved namespace; when one
// becomes served, its workloads are read again (Filler), so the hook sees
// them as SlimObject makes them.
func (k Kind) IdentityObject(obj client.Object) client.Object {
	return k.identityObject(obj, false)
}

func (k Kind) identityObject(obj client.Object, inPlace bool) client.Object {
	if IsSlim(obj) {
		return obj
	}
	m := identityMeta(obj, markOnly[slimIdentity])
	if k.Unstructured() {
		u, ok := obj.(*unstructured.Unstructured)
		if !ok {
			return obj
		}
		out := &unstructured.Unstructured{Object: map[string]any{}}
		out.SetGroupVersionKind(u.GroupVersionKind())
		setMeta(out, m)
		return out
	}
	switch o := obj.(type) {
	case *appsv1.Deployment:
		return into(o, appsv1.Deployment{TypeMeta: o.TypeMeta, ObjectMeta: m}, inPlace)
	case *appsv1.StatefulSet:
		return into(o, appsv1.StatefulSet{TypeMeta: o.TypeMeta, ObjectMeta: m}, inPlace)
	case *appsv1.DaemonSet:
		return into(o, appsv1.DaemonSet{TypeMeta: o.TypeMeta, ObjectMeta: m}, inPlace)
	case *batchv1.CronJob:
		return into(o, batchv1.CronJob{TypeMeta: o.TypeMeta, ObjectMeta: m}, inPlace)
	}
	return obj
}
