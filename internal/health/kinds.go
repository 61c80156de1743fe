package health

import (
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/confighash/confighash/internal/workload"
)

func isBuiltin(k workload.Kind, kind string) bool {
	return !k.Unstructured() && k.GVK == appsv1.SchemeGroupVersion.WithKind(kind)
}

func isCronJob(k workload.Kind) bool {
	return k.GVK.GroupKind() == batchv1.SchemeGroupVersion.WithKind("CronJob").GroupKind()
}

func isArgoRollout(k workload.Kind) bool {
	return k.GVK.Group == "argoproj.io" && k.GVK.Kind == "Rollout"
}

// notObserved is Progressing while the controller has not written a status
// for the object's latest generation: until then every other status field
// describes the previous template. A missing observedGeneration counts as
// not observed (the built-in controllers and Argo Rollouts always write it;
// kstatus alone would be lenient there). Argo Rollouts writes it as a
// string.
func notObserved(u *unstructured.Unstructured) (Verdict, bool) {
	gen := u.GetGeneration()
	raw, found, err := unstructured.NestedFieldNoCopy(u.Object, "status", "observedGeneration")
	if err != nil || !found {
		return progressing("NotObserved", "the controller has not observed generation %d yet", gen), true
	}
	observed, ok := asInt64(raw)
	if !ok || observed != gen {
		return progressing("NotObserved", "the controller has not observed generation %d yet", gen), true
	}
	return Verdict{}, false
}

// asInt64 reads an integer as unstructured content carries it: int64 from
// the converter or a JSON decode, float64 from a plain JSON decode, or a
// decimal string (Argo Rollouts' observedGeneration).
func asInt64(v any) (int64, bool) {
	switch n := v.(type) {
	case int64:
		return n, true
	case int32:
		return int64(n), true
	case int:
		return int64(n), true
	case float64:
		return int64(n), float64(int64(n)) == n
	case string:
		i, err := strconv.ParseInt(n, 10, 64)
		return i, err == nil
	default:
		return 0, false
	}
}

// specReplicas is spec.replicas, 1 when unset (the controllers' default);
// ok is false when it is set but not an integer.
func specReplicas(u *unstructured.Unstructured) (int64, bool) {
	raw, found, err := unstructured.NestedFieldNoCopy(u.Object, "spec", "replicas")
	if err != nil || !found || raw == nil {
		return 1, true
	}
	return asInt64(raw)
}

func updateStrategy(u *unstructured.Unstructured) string {
	s, _, _ := unstructured.NestedString(u.Object, "spec", "updateStrategy", "type")
	return s
}

func deployment(u *unstructured.Unstructured) Verdict {
	if paused, _, _ := unstructured.NestedBool(u.Object, "spec", "paused"); paused {
		return succeeded("Paused", "the Deployment is paused: nothing rolls until it is resumed")
	}
	if v, ok := notObserved(u); ok {
		return v
	}
	if n, ok := specReplicas(u); ok && n == 0 {
		return succeeded("NoReplicas", "the Deployment has 0 replicas: nothing to roll")
	}
	return fromKstatus(u, true)
}

func statefulSet(u *unstructured.Unstructured) Verdict {
	if v, ok := notObserved(u); ok {
		return v
	}
	if updateStrategy(u) == string(appsv1.OnDeleteStatefulSetStrategyType) {
		return succeeded("OnDelete", "the StatefulSet updates a pod only when it is deleted: nothing rolls now")
	}
	if n, ok := specReplicas(u); ok && n == 0 {
		return succeeded("NoReplicas", "the StatefulSet has 0 replicas: nothing to roll")
	}
	return fromKstatus(u, true)
}

func daemonSet(u *unstructured.Unstructured) Verdict {
	if v, ok := notObserved(u); ok {
		return v
	}
	if updateStrategy(u) == string(appsv1.OnDeleteDaemonSetStrategyType) {
		return succeeded("OnDelete", "the DaemonSet updates a pod only when it is deleted: nothing rolls now")
	}
	return fromKstatus(u, true)
}

// custom judges a kind served by a CustomResourceDefinition (other than
// Argo Rollouts) by kstatus' generic rules: observedGeneration when it is
// there, then the Reconciling/Stalled and Ready conditions.
func custom(u *unstructured.Unstructured) Verdict {
	st, found := u.Object["status"]
	if m, isMap := st.(map[string]any); !found || st == nil || (isMap && len(m) == 0) {
		return succeeded("NoStatus", "the kind writes no status: nothing to wait for")
	}
	return fromKstatus(u, false)
}
