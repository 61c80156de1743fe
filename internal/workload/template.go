package workload

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/confighash/confighash/internal/contract"
)

// Template points into an object's pod template. Both fields alias the
// object, so writes through them change the object itself.
type Template struct {
	// Meta is the template's metadata, where the stamp lives. For a bare Pod
	// it is the Pod's own metadata.
	Meta *metav1.ObjectMeta
	// Spec is the pod spec whose reads are hashed.
	Spec *corev1.PodSpec

	// For a custom kind, Meta and Spec are decoded copies of the template
	// held in u at path; SetChecksum writes through to u. metaAbsent says
	// that the template has no metadata field at all, which a JSON patch
	// must create before it can add annotations.
	u          *unstructured.Unstructured
	path       []string
	metaAbsent bool
}

// PodTemplate returns the pod template of obj, an object of kind k, or false
// when it has none: a Rollout that reads a Deployment's template through
// spec.workloadRef, or a custom object whose template is absent or does not
// decode as one, or an object of another kind's Go type. This is the
// accessor for every kind; the typed ones say where their template is in
// the Kinds table, the unstructured ones read k.TemplatePath.
func (k Kind) PodTemplate(obj client.Object) (Template, bool) {
	if k.template != nil {
		return k.template(obj)
	}
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return Template{}, false
	}
	m, found, err := unstructured.NestedMap(u.Object, k.TemplatePath...)
	if !found || err != nil {
		return Template{}, false
	}
	var spec corev1.PodTemplateSpec
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, &spec); err != nil {
		return Template{}, false
	}
	_, hasMeta := m["metadata"]
	return Template{Meta: &spec.ObjectMeta, Spec: &spec.Spec, u: u, path: k.TemplatePath, metaAbsent: !hasMeta}, true
}

// SameGeneration reports whether a and b, two stored copies of one object
// of kind k, are known to hold the same pod template because they have the
// same metadata.generation. The apiserver bumps it on every change to a
// built-in workload's spec, and to a custom resource's fields outside
// metadata and status, and a pod template is inside those. A status write
// leaves it, and so does a metadata edit, except a Deployment's annotations
// (so a caller that cares about some annotations compares them itself). A
// generation of 0 (an object the apiserver did not store) tells nothing,
// and neither does a custom kind whose template path starts in metadata or
// status.
func (k Kind) SameGeneration(a, b client.Object) bool {
	if len(k.TemplatePath) > 0 && (k.TemplatePath[0] == "metadata" || k.TemplatePath[0] == "status") {
		return false
	}
	return a.GetGeneration() != 0 && a.GetGeneration() == b.GetGeneration()
}

// HasMeta reports whether the object has a metadata field at the template
// (typed objects always serialize one).
func (t Template) HasMeta() bool { return !t.metaAbsent }

func fromSpec(t *corev1.PodTemplateSpec) Template {
	return Template{Meta: &t.ObjectMeta, Spec: &t.Spec}
}

// Checksum returns the stamp in the template, or "".
func (t Template) Checksum() string {
	if t.Meta == nil {
		return ""
	}
	return t.Meta.Annotations[contract.ChecksumAnnotation]
}

// SameTemplate reports whether two pod templates differ in nothing but the
// stamp. Objects from admission come defaulted, and those from an informer
// were defaulted when stored, so a plain semantic comparison is enough.
func SameTemplate(a, b Template) bool {
	return equality.Semantic.DeepEqual(a.Spec, b.Spec) &&
		equality.Semantic.DeepEqual(withoutStamp(a), withoutStamp(b))
}

func withoutStamp(t Template) metav1.ObjectMeta {
	if t.Meta == nil {
		return metav1.ObjectMeta{}
	}
	m := *t.Meta.DeepCopy()
	delete(m.Annotations, contract.ChecksumAnnotation)
	if len(m.Annotations) == 0 {
		// A template whose only annotation was the stamp equals one with none.
		m.Annotations = nil
	}
	return m
}

// SetChecksum writes the stamp; an empty sum removes it.
func (t Template) SetChecksum(sum string) {
	if sum == "" {
		delete(t.Meta.Annotations, contract.ChecksumAnnotation)
	} else {
		if t.Meta.Annotations == nil {
			t.Meta.Annotations = map[string]string{}
		}
		t.Meta.Annotations[contract.ChecksumAnnotation] = sum
	}
	if t.u == nil {
		return
	}
	field := append(append([]string(nil), t.path...), "metadata", "annotations", contract.ChecksumAnnotation)
	if sum == "" {
		unstructured.RemoveNestedField(t.u.Object, field...)
		return
	}
	// Creates metadata and annotations when absent; the path up to the
	// template exists, since the template was read from it.
	_ = unstructured.SetNestedField(t.u.Object, sum, field...)
}
