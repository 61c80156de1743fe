package framework

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/confighash/confighash/internal/contract"
)

func TestTemplateStamp(t *testing.T) {
	stamped := metav1.ObjectMeta{Annotations: map[string]string{contract.ChecksumAnnotation: "v2:x"}}
	tmpl := corev1.PodTemplateSpec{ObjectMeta: stamped}
	custom := func(kind string, path ...string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{}}
		u.SetKind(kind)
		if err := unstructured.SetNestedField(u.Object, "v2:x", append(path, "metadata", "annotations", contract.ChecksumAnnotation)...); err != nil {
			t.Fatal(err)
		}
		return u
	}
	for name, obj := range map[string]runtime.Object{
		"Deployment":           &appsv1.Deployment{Spec: appsv1.DeploymentSpec{Template: tmpl}},
		"StatefulSet":          &appsv1.StatefulSet{Spec: appsv1.StatefulSetSpec{Template: tmpl}},
		"Job":                  &batchv1.Job{Spec: batchv1.JobSpec{Template: tmpl}},
		"CronJob":              &batchv1.CronJob{Spec: batchv1.CronJobSpec{JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: tmpl}}}},
		"Pod":                  &corev1.Pod{ObjectMeta: stamped},
		"Rollout":              custom("Rollout", "spec", "template"),
		"unstructured CronJob": custom("CronJob", "spec", "jobTemplate", "spec", "template"),
	} {
		if got, err := TemplateStamp(obj); err != nil || got != "v2:x" {
			t.Errorf("%s: TemplateStamp = %q, %v; want v2:x", name, got, err)
		}
	}
	if got, err := TemplateStamp(&appsv1.Deployment{}); err != nil || got != "" {
		t.Errorf("unstamped Deployment: TemplateStamp = %q, %v; want no stamp", got, err)
	}
	// A CronJob's stamp is on its Job template, not on a spec.template.
	if got, err := TemplateStamp(custom("CronJob", "spec", "template")); err == nil {
		t.Errorf("CronJob without a Job template: TemplateStamp = %q, want an error", got)
	}
	if got, err := TemplateStamp(&corev1.ConfigMap{}); err == nil {
		t.Errorf("ConfigMap: TemplateStamp = %q, want an error", got)
	}
}
