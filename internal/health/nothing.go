package health

import (
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/confighash/confighash/internal/workload"
)

// NothingToRun reports, from the workload's spec alone, that a re-stamp of
// it starts no pod: a CronJob (only its future Jobs get the stamp), a
// Deployment or StatefulSet of 0 replicas, a paused Deployment, a
// StatefulSet or DaemonSet that updates pods only when they are deleted.
// Such a reader can break nothing, and its rollout tells nothing of a
// change's health: the hook puts it in no wave (it is re-stamped at once,
// never a canary, and takes no slot of the bound), and counts it as rolled
// out once written. Judge says the same of it, later, once the controller
// has observed it.
func NothingToRun(kind workload.Kind, obj client.Object) (reason string, ok bool) {
	if isCronJob(kind) {
		return "CronJob", true
	}
	if reason, ok, typed := nothingToRunTyped(obj); typed {
		return reason, ok
	}
	u, err := toUnstructured(kind, obj)
	if err != nil {
		return "", false
	}
	switch {
	case isBuiltin(kind, "Deployment"):
		if paused, _, _ := unstructured.NestedBool(u.Object, "spec", "paused"); paused {
			return "Paused", true
		}
		if n, ok := specReplicas(u); ok && n == 0 {
			return "NoReplicas", true
		}
	case isBuiltin(kind, "StatefulSet"):
		if updateStrategy(u) == string(appsv1.OnDeleteStatefulSetStrategyType) {
			return "OnDelete", true
		}
		if n, ok := specReplicas(u); ok && n == 0 {
			return "NoReplicas", true
		}
	case isBuiltin(kind, "DaemonSet"):
		if updateStrategy(u) == string(appsv1.OnDeleteDaemonSetStrategyType) {
			return "OnDelete", true
		}
	}
	return "", false
}

// nothingToRunTyped is NothingToRun for the built-in kinds as the cache
// holds them, read field by field: the planner asks it of every reader of a
// change, and converting each to unstructured cost more than the checks
// the plan is bounded to. typed is false for any other object.
func nothingToRunTyped(obj client.Object) (reason string, ok, typed bool) {
	zero := func(n *int32) bool { return n != nil && *n == 0 }
	switch o := obj.(type) {
	case *appsv1.Deployment:
		switch {
		case o.Spec.Paused:
			return "Paused", true, true
		case zero(o.Spec.Replicas):
			return "NoReplicas", true, true
		}
	case *appsv1.StatefulSet:
		switch {
		case o.Spec.UpdateStrategy.Type == appsv1.OnDeleteStatefulSetStrategyType:
			return "OnDelete", true, true
		case zero(o.Spec.Replicas):
			return "NoReplicas", true, true
		}
	case *appsv1.DaemonSet:
		if o.Spec.UpdateStrategy.Type == appsv1.OnDeleteDaemonSetStrategyType {
			return "OnDelete", true, true
		}
	default:
		return "", false, false
	}
	return "", false, true
}
