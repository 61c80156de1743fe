package workload

import (
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Template points into an object's pod template. Both fields alias the
// object, so writes through them change the object itself.
type Template struct {
	// Meta is the template's metadata, where the stamp lives. For a bare Pod
	// it is the Pod's own metadata.
	Meta *metav1.ObjectMeta
	// Spec is the pod spec whose reads are hashed.
	Spec *corev1.PodSpec
}

// PodTemplate returns the pod template of obj, or false when obj is not a kind
// confighash knows.
func PodTemplate(obj any) (Template, bool) {
	switch o := obj.(type) {
	case *appsv1.Deployment:
		return fromSpec(&o.Spec.Template), true
	case *appsv1.StatefulSet:
		return fromSpec(&o.Spec.Template), true
	case *appsv1.DaemonSet:
		return fromSpec(&o.Spec.Template), true
	case *batchv1.Job:
		return fromSpec(&o.Spec.Template), true
	case *batchv1.CronJob:
		// The Job template, not a running Job, carries the stamp, so the next
		// Job gets the new config and running ones are left alone.
		return fromSpec(&o.Spec.JobTemplate.Spec.Template), true
	case *corev1.Pod:
		return Template{Meta: &o.ObjectMeta, Spec: &o.Spec}, true
	}
	return Template{}, false
}

func fromSpec(t *corev1.PodTemplateSpec) Template {
	return Template{Meta: &t.ObjectMeta, Spec: &t.Spec}
}

// Checksum returns the stamp in the template, or "".
func (t Template) Checksum() string {
	return t.Meta.Annotations[ChecksumAnnotation]
}

// SetChecksum writes the stamp; an empty sum removes it.
func (t Template) SetChecksum(sum string) {
	if sum == "" {
		delete(t.Meta.Annotations, ChecksumAnnotation)
		return
	}
	if t.Meta.Annotations == nil {
		t.Meta.Annotations = map[string]string{}
	}
	t.Meta.Annotations[ChecksumAnnotation] = sum
}
