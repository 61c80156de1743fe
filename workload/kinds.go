package workload

import (
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Kind describes one kind of workload confighash stamps.
type Kind struct {
	GVK schema.GroupVersionKind
	// Resource is the plural resource name, as admission rules need it.
	Resource string
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
}

// Kinds lists every kind confighash stamps, mutable ones first.
func Kinds() []Kind {
	return []Kind{
		{GVK: appsv1.SchemeGroupVersion.WithKind("Deployment"), Resource: "deployments", MetaPath: "/spec/template/metadata", Mutable: true,
			New: func() client.Object { return &appsv1.Deployment{} }, NewList: func() client.ObjectList { return &appsv1.DeploymentList{} }},
		{GVK: appsv1.SchemeGroupVersion.WithKind("StatefulSet"), Resource: "statefulsets", MetaPath: "/spec/template/metadata", Mutable: true,
			New: func() client.Object { return &appsv1.StatefulSet{} }, NewList: func() client.ObjectList { return &appsv1.StatefulSetList{} }},
		{GVK: appsv1.SchemeGroupVersion.WithKind("DaemonSet"), Resource: "daemonsets", MetaPath: "/spec/template/metadata", Mutable: true,
			New: func() client.Object { return &appsv1.DaemonSet{} }, NewList: func() client.ObjectList { return &appsv1.DaemonSetList{} }},
		{GVK: batchv1.SchemeGroupVersion.WithKind("CronJob"), Resource: "cronjobs", MetaPath: "/spec/jobTemplate/spec/template/metadata", Mutable: true,
			New: func() client.Object { return &batchv1.CronJob{} }, NewList: func() client.ObjectList { return &batchv1.CronJobList{} }},
		{GVK: batchv1.SchemeGroupVersion.WithKind("Job"), Resource: "jobs", MetaPath: "/spec/template/metadata",
			New: func() client.Object { return &batchv1.Job{} }, NewList: func() client.ObjectList { return &batchv1.JobList{} }},
		{GVK: corev1.SchemeGroupVersion.WithKind("Pod"), Resource: "pods", MetaPath: "/metadata",
			New: func() client.Object { return &corev1.Pod{} }, NewList: func() client.ObjectList { return &corev1.PodList{} }},
	}
}

// MutableKinds lists the kinds the hook re-touches.
func MutableKinds() []Kind {
	var out []Kind
	for _, k := range Kinds() {
		if k.Mutable {
			out = append(out, k)
		}
	}
	return out
}

// KindOf finds the kind for a group/version/kind.
func KindOf(gvk schema.GroupVersionKind) (Kind, bool) {
	for _, k := range Kinds() {
		if k.GVK == gvk {
			return k, true
		}
	}
	return Kind{}, false
}
