package health

import (
	"fmt"
	"maps"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/confighash/confighash/internal/workload"
)

// Input is everything Judge needs.
type Input struct {
	// Kind is the workload's kind, from internal/workload (its GVK tells
	// the kind).
	Kind workload.Kind
	// Object is the workload: typed for the built-in kinds
	// (*appsv1.Deployment, ...), *unstructured.Unstructured for Rollouts
	// and custom kinds. Judge never changes it.
	Object client.Object
	// Stamp is the confighash.dev/checksum the hook wrote; the pods of the
	// new revision carry it in their annotations.
	Stamp string
	// Pods are the pods in the workload's namespace matched by PodSelector
	// (old-revision pods included); none when PodSelector had no selector.
	Pods []corev1.Pod
	// Now is the time of the judgement (for the soak).
	Now time.Time
	// Soak is how long every new-revision pod must have run, since its
	// latest container start and without a restart, before Succeeded.
	Soak time.Duration
	// Since is when the hook re-stamped the workload for the change judged
	// (zero: unknown, and every exit counts): an exit of a container
	// started before it ran with the content before the change. The caller
	// takes it from its own memory or from a record it verified, never
	// from the object's annotations as they are, which anyone who writes
	// the workload can set (a since far ahead there would make every exit
	// look older than the change).
	Since time.Time
}

// Judge says whether in.Object's rollout of its current pod template has
// succeeded, is still going, or failed (see the package doc for the rules
// of each kind).
func Judge(in Input) Verdict {
	if in.Object == nil {
		return progressing("NoObject", "no workload object to judge")
	}
	if !in.Kind.Mutable {
		// Jobs and bare Pods are never re-stamped: their template is fixed.
		return succeeded("Immutable", "%s pod templates are fixed once created; nothing rolls", in.Kind.GVK.Kind)
	}
	u, err := toUnstructured(in.Kind, in.Object)
	if err != nil {
		// The error can quote the object's content: not shown.
		return progressing("StatusUnreadable", "the %s does not convert to unstructured", in.Kind.GVK.Kind)
	}
	if isCronJob(in.Kind) {
		return succeeded("CronJob", "a CronJob's stamp only reaches its future Jobs; nothing rolls now")
	}
	pods := newRevision(in.Pods, in.Stamp)
	if v, bad := podFailure(pods, in.Since); bad {
		return v
	}
	if in.Stamp != "" {
		if t, ok := in.Kind.PodTemplate(in.Object); ok && t.Checksum() != in.Stamp {
			return progressing("NotStamped", "the object's pod template does not carry the stamp yet")
		}
	}
	v := judgeKind(in.Kind, u)
	if v.State != Succeeded || v.Reason != reasonUpdated {
		return v
	}
	if len(pods) == 0 && awaitsPods(in.Kind, in.Object, u) {
		return progressing("NoNewPods", "no pod of the new revision yet")
	}
	return soak(v, pods, in.Now, in.Soak)
}

// awaitsPods reports whether a custom kind's Current must wait for a pod
// of the new revision: kstatus knows nothing of its replica counts, and
// says Current as soon as its controller observes the generation, before
// it has made a new pod. It waits when the object asks for replicas
// (an integer spec.replicas above 0) and has a selector to find them.
// The built-in kinds and Argo Rollouts count their updated replicas
// themselves.
func awaitsPods(k workload.Kind, obj client.Object, u *unstructured.Unstructured) bool {
	if !k.Unstructured() || isArgoRollout(k) {
		return false
	}
	raw, found, err := unstructured.NestedFieldNoCopy(u.Object, "spec", "replicas")
	if err != nil || !found {
		return false
	}
	if n, ok := asInt64(raw); !ok || n <= 0 {
		return false
	}
	_, ok, err := PodSelector(k, obj)
	return ok && err == nil
}

// reasonUpdated is the Reason of a kind's verdict that still waits for the
// soak: the controller says the new revision is out. The other Succeeded
// verdicts have nothing to wait for and skip it.
const reasonUpdated = "Updated"

func judgeKind(k workload.Kind, u *unstructured.Unstructured) Verdict {
	switch {
	case isBuiltin(k, "Deployment"):
		return deployment(u)
	case isBuiltin(k, "StatefulSet"):
		return statefulSet(u)
	case isBuiltin(k, "DaemonSet"):
		return daemonSet(u)
	case isArgoRollout(k):
		return argoRollout(u)
	default:
		return custom(u)
	}
}

// toUnstructured returns obj's content as unstructured, with the kind's
// apiVersion and kind set (typed objects often have an empty TypeMeta,
// and kstatus picks its rules by them). obj itself is left alone.
func toUnstructured(k workload.Kind, obj client.Object) (*unstructured.Unstructured, error) {
	var content map[string]any
	if u, ok := obj.(*unstructured.Unstructured); ok {
		content = maps.Clone(u.Object)
	} else {
		c, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
		if err != nil {
			return nil, fmt.Errorf("converting to unstructured: %w", err)
		}
		content = c
	}
	if content == nil {
		content = map[string]any{}
	}
	u := &unstructured.Unstructured{Object: content}
	u.SetGroupVersionKind(k.GVK)
	return u, nil
}
