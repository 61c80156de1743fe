package framework

import (
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/confighash/confighash/internal/contract"
)

// TemplateStamp is the stamp on a workload's pod template, or "" when it
// has none: the one reader of it for the specs. obj is a typed object or an
// unstructured one (a Rollout, a custom kind). A CronJob keeps its template
// in the Job template, a Pod is its own template, and every other kind at
// spec.template. It reads the object's fields itself rather than through
// the product's kind table, so a spec does not check confighash against
// confighash's own idea of where a template is.
func TemplateStamp(obj runtime.Object) (string, error) {
	var m map[string]any
	var kind string
	switch o := obj.(type) {
	case *unstructured.Unstructured:
		m, kind = o.Object, o.GetKind()
	default:
		var err error
		if m, err = runtime.DefaultUnstructuredConverter.ToUnstructured(obj); err != nil {
			return "", fmt.Errorf("reading %T: %w", obj, err)
		}
		switch obj.(type) {
		case *batchv1.CronJob:
			kind = "CronJob"
		case *corev1.Pod:
			kind = "Pod"
		}
	}
	path := []string{"spec", "template"}
	switch kind {
	case "CronJob":
		path = []string{"spec", "jobTemplate", "spec", "template"}
	case "Pod":
		path = nil
	}
	if _, found, err := unstructured.NestedFieldNoCopy(m, path...); err != nil || !found {
		return "", fmt.Errorf("%T has no pod template at %v", obj, path)
	}
	s, _, err := unstructured.NestedString(m, append(path, "metadata", "annotations", contract.ChecksumAnnotation)...)
	if err != nil {
		return "", fmt.Errorf("reading the stamp of %T: %w", obj, err)
	}
	return s, nil
}
