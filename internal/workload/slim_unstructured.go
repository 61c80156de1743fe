package workload

import (
	"encoding/json"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// messageBytes bounds a kept status.message: Argo Rollouts' starts with
// the one-word reason the judge reads (health.degradedReason).
const messageBytes = 256

// slimUnstructured builds the slimmed copy of a custom kind's object (an
// Argo Rollout, a --workload-kind): meta, the template tmpl at the kind's
// path (none when the object has none), spec.replicas and spec.selector,
// which the judge reads of any kind, and of the status what it and
// kstatus' generic rules read: observedGeneration, phase, message and the
// conditions. A status that held something else still holds something
// (the judge tells "no status" from "a status kstatus reads nothing in").
func (k Kind) slimUnstructured(obj client.Object, meta metav1.ObjectMeta, tmpl *corev1.PodTemplateSpec) client.Object {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return obj
	}
	out := &unstructured.Unstructured{Object: map[string]any{}}
	out.SetGroupVersionKind(u.GroupVersionKind())
	setMeta(out, meta)
	spec := map[string]any{}
	if r, found, _ := unstructured.NestedFieldNoCopy(u.Object, "spec", "replicas"); found {
		if v, ok := scalar(r, shortValueBytes); ok {
			spec["replicas"] = v
		}
	}
	if s, found, _ := unstructured.NestedFieldNoCopy(u.Object, "spec", "selector"); found {
		if v, ok := slimRawSelector(s); ok {
			spec["selector"] = v
		}
	}
	out.Object["spec"] = spec
	if tmpl != nil {
		if m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(tmpl); err == nil {
			_ = unstructured.SetNestedField(out.Object, m, k.TemplatePath...)
		}
	}
	if st, found := u.Object["status"]; found {
		out.Object["status"] = slimRawStatus(st)
	}
	return out
}

// setMeta writes m into u's metadata.
func setMeta(u *unstructured.Unstructured, m metav1.ObjectMeta) {
	u.SetName(m.Name)
	u.SetNamespace(m.Namespace)
	u.SetUID(m.UID)
	u.SetResourceVersion(m.ResourceVersion)
	u.SetGeneration(m.Generation)
	u.SetCreationTimestamp(m.CreationTimestamp)
	u.SetDeletionTimestamp(m.DeletionTimestamp)
	u.SetOwnerReferences(m.OwnerReferences)
	u.SetAnnotations(m.Annotations)
}

// scalar returns v when it is a number, a bool, nil, or a string of at
// most limit bytes.
func scalar(v any, limit int) (any, bool) {
	switch s := v.(type) {
	case string:
		return s, len(s) <= limit
	case int64, float64, bool, nil:
		return v, true
	}
	return nil, false
}

// slimRawSelector keeps a selector, a string or a LabelSelector's map, of
// at most maxSelectorBytes.
func slimRawSelector(s any) (any, bool) {
	if str, ok := s.(string); ok {
		return str, len(str) <= maxSelectorBytes
	}
	m, ok := s.(map[string]any)
	if !ok {
		return nil, false
	}
	b, err := json.Marshal(m)
	if err != nil || len(b) > maxSelectorBytes {
		return nil, false
	}
	return runtime.DeepCopyJSONValue(m), true
}

// slimRawStatus keeps what the judge reads of a custom kind's status.
func slimRawStatus(st any) any {
	m, ok := st.(map[string]any)
	if !ok {
		if v, ok := scalar(st, shortValueBytes); ok {
			return v
		}
		// Not a map either way: kstatus finds it as unreadable as the
		// original.
		return overLimitValue("status")
	}
	out := map[string]any{}
	if v, ok := scalar(m["observedGeneration"], shortValueBytes); ok && m["observedGeneration"] != nil {
		out["observedGeneration"] = v
	}
	if v, ok := m["phase"].(string); ok {
		out["phase"] = short(v)
	}
	if v, ok := m["message"].(string); ok {
		out["message"] = v[:min(len(v), messageBytes)]
	}
	if cs, ok := m["conditions"].([]any); ok {
		out["conditions"] = slimRawConditions(cs)
	}
	if len(out) == 0 && len(m) > 0 {
		out[slimmedKey] = slimHeld
	}
	return out
}

// slimRawConditions keeps the first maxConditions conditions, each with
// its type, status and reason.
func slimRawConditions(cs []any) []any {
	out := make([]any, 0, min(len(cs), maxConditions))
	for _, c := range cs[:min(len(cs), maxConditions)] {
		m, ok := c.(map[string]any)
		if !ok {
			continue
		}
		kept := map[string]any{}
		for _, f := range []string{"type", "status", "reason"} {
			if v, ok := m[f].(string); ok {
				kept[f] = short(v)
			}
		}
		out = append(out, kept)
	}
	return out
}
