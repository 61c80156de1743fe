package webhook

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"

	"github.com/confighash/confighash/workload"
)

// sameTemplate reports whether two pod templates differ in nothing but the
// stamp. Both objects come to admission defaulted, so a plain semantic
// comparison is enough.
func sameTemplate(a, b workload.Template) bool {
	return equality.Semantic.DeepEqual(a.Spec, b.Spec) &&
		equality.Semantic.DeepEqual(withoutStamp(a), withoutStamp(b))
}

func withoutStamp(t workload.Template) corev1.PodTemplateSpec {
	m := *t.Meta.DeepCopy()
	delete(m.Annotations, workload.ChecksumAnnotation)
	if len(m.Annotations) == 0 {
		// A template whose only annotation was the stamp equals one with none.
		m.Annotations = nil
	}
	return corev1.PodTemplateSpec{ObjectMeta: m}
}
