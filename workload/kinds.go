package workload

import (
	"reflect"

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
}

// Kinds lists every kind confighash stamps, mutable ones first.
func Kinds() []Kind {
	return []Kind{
		{GVK: appsv1.SchemeGroupVersion.WithKind("Deployment"), Resource: "deployments", ShortNames: []string{"deploy"},
			MetaPath: "/spec/template/metadata", Mutable: true,
			New: func() client.Object { return &appsv1.Deployment{} }, NewList: func() client.ObjectList { return &appsv1.DeploymentList{} },
			ClearStatus: statusClearer(func(o *appsv1.Deployment) { o.Status = appsv1.DeploymentStatus{} })},
		{GVK: appsv1.SchemeGroupVersion.WithKind("StatefulSet"), Resource: "statefulsets", ShortNames: []string{"sts"},
			MetaPath: "/spec/template/metadata", Mutable: true,
			New: func() client.Object { return &appsv1.StatefulSet{} }, NewList: func() client.ObjectList { return &appsv1.StatefulSetList{} },
			ClearStatus: statusClearer(func(o *appsv1.StatefulSet) { o.Status = appsv1.StatefulSetStatus{} })},
		{GVK: appsv1.SchemeGroupVersion.WithKind("DaemonSet"), Resource: "daemonsets", ShortNames: []string{"ds"},
			MetaPath: "/spec/template/metadata", Mutable: true,
			New: func() client.Object { return &appsv1.DaemonSet{} }, NewList: func() client.ObjectList { return &appsv1.DaemonSetList{} },
			ClearStatus: statusClearer(func(o *appsv1.DaemonSet) { o.Status = appsv1.DaemonSetStatus{} })},
		{GVK: batchv1.SchemeGroupVersion.WithKind("CronJob"), Resource: "cronjobs", ShortNames: []string{"cj"},
			MetaPath: "/spec/jobTemplate/spec/template/metadata", Mutable: true,
			New: func() client.Object { return &batchv1.CronJob{} }, NewList: func() client.ObjectList { return &batchv1.CronJobList{} },
			ClearStatus: statusClearer(func(o *batchv1.CronJob) { o.Status = batchv1.CronJobStatus{} })},
		{GVK: batchv1.SchemeGroupVersion.WithKind("Job"), Resource: "jobs",
			MetaPath: "/spec/template/metadata",
			New:      func() client.Object { return &batchv1.Job{} }, NewList: func() client.ObjectList { return &batchv1.JobList{} },
			ClearStatus: statusClearer(func(o *batchv1.Job) { o.Status = batchv1.JobStatus{} })},
		{GVK: corev1.SchemeGroupVersion.WithKind("Pod"), Resource: "pods", ShortNames: []string{"po"},
			MetaPath: "/metadata",
			New:      func() client.Object { return &corev1.Pod{} }, NewList: func() client.ObjectList { return &corev1.PodList{} },
			ClearStatus: statusClearer(func(o *corev1.Pod) { o.Status = corev1.PodStatus{} })},
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

// KindFor finds the kind of a typed object by its Go type, for objects whose
// TypeMeta may be empty (as decoded or deep-copied objects often are).
func KindFor(obj client.Object) (Kind, bool) {
	t := reflect.TypeOf(obj)
	for _, k := range Kinds() {
		if reflect.TypeOf(k.New()) == t {
			return k, true
		}
	}
	return Kind{}, false
}
