package workload

import (
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Kind describes one kind of workload confighash stamps. Everything outside
// this package that depends on the kind (admission rules, RBAC, informers,
// the status command's names and dry runs) reads it from here.
type Kind struct {
	GVK schema.GroupVersionKind
	// Resource is the plural resource name, as admission rules need it.
	Resource string
	// ShortNames are kubectl's short names for the kind, which the status
	// command accepts as kubectl does.
	ShortNames []string
	// MetaPath is the JSON Pointer of the pod template's metadata in the
	// object, for patches that must touch nothing else.
	MetaPath string
	// Mutable is true when the pod template may change after create. Only
	// those kinds are stamped on UPDATE and re-touched by the hook; a Job's or
	// Pod's template is fixed once created.
	Mutable bool
	// New returns an empty object of the kind.
	New func() client.Object
	// NewList returns an empty list of the kind.
	NewList func() client.ObjectList
	// ClearStatus zeroes the status of an object of the kind, so that a copy
	// of a live object is fit for a CREATE. It leaves objects of other Go
	// types alone.
	ClearStatus func(client.Object)
	// TemplatePath, set for kinds served by a CustomResourceDefinition, is
	// the field path of the pod template. Their objects are handled as
	// unstructured: confighash has no Go type for them, and the apiserver
	// may not even serve them yet (see Unstructured).
	TemplatePath []string

	// template finds the pod template of a typed kind's object; nil for
	// the unstructured kinds, which read TemplatePath.
	template func(client.Object) (Template, bool)
}

// Unstructured reports whether the kind's objects are unstructured: it comes
// from a CustomResourceDefinition (the built-in Rollout, or one
// --workload-kind adds), confighash has no Go type for it, and the hook
// watches it only once the apiserver serves it, so confighash starts and
// works on clusters without the CRD.
func (k Kind) Unstructured() bool { return len(k.TemplatePath) > 0 }

// Kinds lists every kind confighash stamps, mutable ones first.
func Kinds() Registry {
	return Registry{
		{GVK: appsv1.SchemeGroupVersion.WithKind("Deployment"), Resource: "deployments", ShortNames: []string{"deploy"},
			MetaPath: "/spec/template/metadata", Mutable: true,
			New: func() client.Object { return &appsv1.Deployment{} }, NewList: func() client.ObjectList { return &appsv1.DeploymentList{} },
			ClearStatus: statusClearer(func(o *appsv1.Deployment) { o.Status = appsv1.DeploymentStatus{} }),
			template:    typedTemplate(func(o *appsv1.Deployment) Template { return fromSpec(&o.Spec.Template) })},
		{GVK: appsv1.SchemeGroupVersion.WithKind("StatefulSet"), Resource: "statefulsets", ShortNames: []string{"sts"},
			MetaPath: "/spec/template/metadata", Mutable: true,
			New: func() client.Object { return &appsv1.StatefulSet{} }, NewList: func() client.ObjectList { return &appsv1.StatefulSetList{} },
			ClearStatus: statusClearer(func(o *appsv1.StatefulSet) { o.Status = appsv1.StatefulSetStatus{} }),
			template:    typedTemplate(func(o *appsv1.StatefulSet) Template { return fromSpec(&o.Spec.Template) })},
		{GVK: appsv1.SchemeGroupVersion.WithKind("DaemonSet"), Resource: "daemonsets", ShortNames: []string{"ds"},
			MetaPath: "/spec/template/metadata", Mutable: true,
			New: func() client.Object { return &appsv1.DaemonSet{} }, NewList: func() client.ObjectList { return &appsv1.DaemonSetList{} },
			ClearStatus: statusClearer(func(o *appsv1.DaemonSet) { o.Status = appsv1.DaemonSetStatus{} }),
			template:    typedTemplate(func(o *appsv1.DaemonSet) Template { return fromSpec(&o.Spec.Template) })},
		{GVK: batchv1.SchemeGroupVersion.WithKind("CronJob"), Resource: "cronjobs", ShortNames: []string{"cj"},
			MetaPath: "/spec/jobTemplate/spec/template/metadata", Mutable: true,
			New: func() client.Object { return &batchv1.CronJob{} }, NewList: func() client.ObjectList { return &batchv1.CronJobList{} },
			ClearStatus: statusClearer(func(o *batchv1.CronJob) { o.Status = batchv1.CronJobStatus{} }),
			// The Job template, not a running Job, carries the stamp, so the next
			// Job gets the new config and running ones are left alone.
			template: typedTemplate(func(o *batchv1.CronJob) Template { return fromSpec(&o.Spec.JobTemplate.Spec.Template) })},
		// Argo Rollouts' Rollout: a Deployment with progressive delivery.
		// A Rollout with spec.workloadRef has no template of its own; it
		// reads a Deployment's, which is stamped as a Deployment.
		CustomKind(schema.GroupVersionKind{Group: "argoproj.io", Version: "v1alpha1", Kind: "Rollout"}, "rollouts",
			[]string{"spec", "template"}, "ro"),
		{GVK: batchv1.SchemeGroupVersion.WithKind("Job"), Resource: "jobs",
			MetaPath: "/spec/template/metadata",
			New:      func() client.Object { return &batchv1.Job{} }, NewList: func() client.ObjectList { return &batchv1.JobList{} },
			ClearStatus: statusClearer(func(o *batchv1.Job) { o.Status = batchv1.JobStatus{} }),
			template:    typedTemplate(func(o *batchv1.Job) Template { return fromSpec(&o.Spec.Template) })},
		{GVK: corev1.SchemeGroupVersion.WithKind("Pod"), Resource: "pods", ShortNames: []string{"po"},
			MetaPath: "/metadata",
			New:      func() client.Object { return &corev1.Pod{} }, NewList: func() client.ObjectList { return &corev1.PodList{} },
			ClearStatus: statusClearer(func(o *corev1.Pod) { o.Status = corev1.PodStatus{} }),
			// A bare Pod is its own template.
			template: typedTemplate(func(o *corev1.Pod) Template { return Template{Meta: &o.ObjectMeta, Spec: &o.Spec} })},
	}
}

// typedTemplate adapts a typed template accessor to any object, as
// statusClearer does the status reset: an object of another Go type has no
// template of this kind.
func typedTemplate[T client.Object](at func(T) Template) func(client.Object) (Template, bool) {
	return func(obj client.Object) (Template, bool) {
		o, ok := obj.(T)
		if !ok {
			return Template{}, false
		}
		return at(o), true
	}
}

// statusClearer adapts a typed status reset to any object, so that a Kind
// entry states its reset once, in terms of its own Go type.
func statusClearer[T client.Object](clear func(T)) func(client.Object) {
	return func(obj client.Object) {
		if o, ok := obj.(T); ok {
			clear(o)
		}
	}
}
