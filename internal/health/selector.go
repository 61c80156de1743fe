package health

import (
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/confighash/confighash/internal/workload"
)

// PodSelector is the label selector to list obj's pods with: its
// spec.selector, typed or unstructured (a LabelSelector, or a selector
// string as some custom kinds keep it). ok is false when there is none to
// use: a CronJob (it has no spec.selector: its Jobs' pods are not a
// rollout), a kind that is never
// re-stamped, a custom kind without spec.selector, or a selector that
// selects everything (it would list the whole namespace). Judge then
// decides without pods.
func PodSelector(kind workload.Kind, obj client.Object) (labels.Selector, bool, error) {
	if !kind.Mutable {
		return nil, false, nil
	}
	u, err := toUnstructured(kind, obj)
	if err != nil {
		return nil, false, err
	}
	raw, found, err := unstructured.NestedFieldNoCopy(u.Object, "spec", "selector")
	if err != nil {
		return nil, false, fmt.Errorf("%s spec.selector: %w", kind.GVK.Kind, err)
	}
	if !found || raw == nil {
		return nil, false, nil
	}
	var sel labels.Selector
	switch s := raw.(type) {
	case string:
		if strings.TrimSpace(s) == "" {
			return nil, false, nil
		}
		if sel, err = labels.Parse(s); err != nil {
			return nil, false, fmt.Errorf("%s spec.selector: %w", kind.GVK.Kind, err)
		}
	case map[string]any:
		var ls metav1.LabelSelector
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(s, &ls); err != nil {
			return nil, false, fmt.Errorf("%s spec.selector: %w", kind.GVK.Kind, err)
		}
		if sel, err = metav1.LabelSelectorAsSelector(&ls); err != nil {
			return nil, false, fmt.Errorf("%s spec.selector: %w", kind.GVK.Kind, err)
		}
	default:
		return nil, false, fmt.Errorf("%s spec.selector is a %T, not a label selector", kind.GVK.Kind, raw)
	}
	if sel.Empty() {
		return nil, false, nil
	}
	return sel, true, nil
}
