package pinner

import (
	"context"
	"encoding/json"
	"errors"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/confighash/confighash/internal/contract"
	"github.com/confighash/confighash/internal/pinning"
)

// revision is the object a pod was made from: the template that names its
// content, and the owner its snapshots get, which lives exactly as long as
// that revision is kept.
type revision struct {
	template corev1.PodTemplateSpec
	owner    metav1.OwnerReference
	optedOut bool
	// workload is the revision's controller (a ReplicaSet's Deployment),
	// nil when it has none: where Events about its pods go.
	workload *metav1.OwnerReference
}

// revisionOf reads the pod's revision live: its ReplicaSet (Deployments',
// Argo Rollouts'), the ControllerRevision its StatefulSet or DaemonSet
// labelled it with, or its Job. The revision's template must carry the
// pod's stamp. A StatefulSet, DaemonSet or CronJob is read too, for its
// opt-out.
func (p *Pinner) revisionOf(ctx context.Context, pod *corev1.Pod) (revision, Result, bool) {
	ref := metav1.GetControllerOf(pod)
	if ref == nil {
		return revision{}, notPinned(NoRevision, "no controller"), false
	}
	var (
		rev  revision
		meta *metav1.ObjectMeta
		err  error
	)
	switch {
	case ref.APIVersion == "apps/v1" && ref.Kind == "ReplicaSet":
		rs := &appsv1.ReplicaSet{}
		err = p.Client.Get(ctx, client.ObjectKey{Namespace: pod.Namespace, Name: ref.Name}, rs)
		if err == nil && rs.UID != ref.UID {
			return revision{}, notPinned(NoRevision, "ReplicaSet "+ref.Name+" was replaced"), false
		}
		rev.template, meta = rs.Spec.Template, &rs.ObjectMeta
	case ref.APIVersion == "batch/v1" && ref.Kind == "Job":
		job := &batchv1.Job{}
		err = p.Client.Get(ctx, client.ObjectKey{Namespace: pod.Namespace, Name: ref.Name}, job)
		if err == nil && job.UID != ref.UID {
			return revision{}, notPinned(NoRevision, "Job "+ref.Name+" was replaced"), false
		}
		rev.template, meta = job.Spec.Template, &job.ObjectMeta
	case ref.APIVersion == "apps/v1" && (ref.Kind == "StatefulSet" || ref.Kind == "DaemonSet"):
		var cr *appsv1.ControllerRevision
		cr, rev.template, err = p.controllerRevision(ctx, pod, ref)
		if notHis := errRevision(""); errors.As(err, &notHis) {
			return revision{}, notPinned(NoRevision, err.Error()), false
		}
		if err == nil {
			meta = &cr.ObjectMeta
		}
	default:
		return revision{}, notPinned(NoRevision, "controller "+ref.Kind+" keeps no revision pinning knows"), false
	}
	if err != nil {
		return revision{}, notPinned(failed(ReadFailed, err), "reading "+ref.Kind+" "+ref.Name+": "+err.Error()), false
	}
	if rev.template.Annotations[contract.ChecksumAnnotation] != pod.Annotations[contract.ChecksumAnnotation] {
		return revision{}, notPinned(NoRevision, ref.Kind+" "+ref.Name+"'s revision has another stamp"), false
	}
	gvk := map[string]string{"ReplicaSet": "apps/v1", "Job": "batch/v1"}
	kind, apiVersion := ref.Kind, gvk[ref.Kind]
	if apiVersion == "" {
		kind, apiVersion = "ControllerRevision", "apps/v1"
	}
	rev.owner = metav1.OwnerReference{APIVersion: apiVersion, Kind: kind, Name: meta.Name, UID: meta.UID}
	rev.workload = metav1.GetControllerOf(meta)
	// The workload's own annotations opt it out; the template's count
	// everywhere. A Deployment keeps its ReplicaSets' annotations in step
	// and a plain Job is its own workload, but a ControllerRevision copies
	// them only when it is made and a CronJob's never reach its Jobs: those
	// workloads are read live.
	annotations := meta.Annotations
	if w := rev.workload; w != nil && (kind == "ControllerRevision" || w.APIVersion == "batch/v1" && w.Kind == "CronJob") {
		live, res, ok := p.workloadAnnotations(ctx, pod.Namespace, w)
		if !ok {
			return revision{}, res, false
		}
		annotations = live
	}
	rev.optedOut = !pinning.WorkloadPins(annotations) || !pinning.WorkloadPins(rev.template.Annotations)
	return rev, Result{}, true
}

// workloadAnnotations reads the annotations of w, the revision's workload,
// live and metadata only, or why not.
func (p *Pinner) workloadAnnotations(ctx context.Context, namespace string, w *metav1.OwnerReference) (map[string]string, Result, bool) {
	obj := &metav1.PartialObjectMetadata{}
	obj.SetGroupVersionKind(schema.FromAPIVersionAndKind(w.APIVersion, w.Kind))
	if err := p.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: w.Name}, obj); err != nil {
		return nil, notPinned(failed(ReadFailed, err), "reading "+w.Kind+" "+w.Name+": "+err.Error()), false
	}
	if obj.UID != w.UID {
		return nil, notPinned(NoRevision, w.Kind+" "+w.Name+" was replaced"), false
	}
	return obj.Annotations, Result{}, true
}

// revisionHashLabel names a StatefulSet's or DaemonSet's pod's revision.
const revisionHashLabel = appsv1.ControllerRevisionHashLabelKey

// errRevision is a ControllerRevision that is not the pod's.
type errRevision string

func (e errRevision) Error() string { return string(e) }

// controllerRevision reads the ControllerRevision a StatefulSet's or
// DaemonSet's pod was made from (the StatefulSet labels its pods with the
// revision's name, the DaemonSet with its hash) and the template it holds.
func (p *Pinner) controllerRevision(ctx context.Context, pod *corev1.Pod, ref *metav1.OwnerReference) (*appsv1.ControllerRevision, corev1.PodTemplateSpec, error) {
	hash := pod.Labels[revisionHashLabel]
	if hash == "" {
		return nil, corev1.PodTemplateSpec{}, errRevision("pod has no " + revisionHashLabel + " label")
	}
	name := hash
	if ref.Kind == "DaemonSet" {
		name = ref.Name + "-" + hash
	}
	cr := &appsv1.ControllerRevision{}
	if err := p.Client.Get(ctx, client.ObjectKey{Namespace: pod.Namespace, Name: name}, cr); err != nil {
		return nil, corev1.PodTemplateSpec{}, err
	}
	if owner := metav1.GetControllerOf(cr); owner == nil || owner.UID != ref.UID {
		return nil, corev1.PodTemplateSpec{}, errRevision("ControllerRevision " + name + " is not " + ref.Kind + " " + ref.Name + "'s")
	}
	// The data is the patch that restores the revision: the template
	// whole, under spec.
	var data struct {
		Spec struct {
			Template corev1.PodTemplateSpec `json:"template"`
		} `json:"spec"`
	}
	if err := json.Unmarshal(cr.Data.Raw, &data); err != nil {
		return nil, corev1.PodTemplateSpec{}, errRevision("ControllerRevision " + name + ": " + err.Error())
	}
	return cr, data.Spec.Template, nil
}
