package pinner

import (
	"context"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/confighash/confighash/internal/contract"
	"github.com/confighash/confighash/internal/pinning"
)

// revision is the object a pod was made from: the template that names its
// content, and the owner its snapshots get.
type revision struct {
	template corev1.PodTemplateSpec
	owner    metav1.OwnerReference
	optedOut bool
}

// revisionOf reads the pod's controller live. Only ReplicaSets
// (Deployments', Argo Rollouts') are known: StatefulSets and DaemonSets keep
// their revisions in ControllerRevisions, and Jobs are their own.
func (p *Pinner) revisionOf(ctx context.Context, pod *corev1.Pod) (revision, Result, bool) {
	ref := metav1.GetControllerOf(pod)
	if ref == nil || ref.APIVersion != "apps/v1" || ref.Kind != "ReplicaSet" {
		return revision{}, notPinned(NoRevision, "controller is not a ReplicaSet"), false
	}
	rs := &appsv1.ReplicaSet{}
	if err := p.Client.Get(ctx, client.ObjectKey{Namespace: pod.Namespace, Name: ref.Name}, rs); err != nil {
		return revision{}, notPinned(ReadFailed, "reading ReplicaSet "+ref.Name+": "+err.Error()), false
	}
	if rs.UID != ref.UID {
		return revision{}, notPinned(NoRevision, "ReplicaSet "+ref.Name+" was replaced"), false
	}
	if rs.Spec.Template.Annotations[contract.ChecksumAnnotation] != pod.Annotations[contract.ChecksumAnnotation] {
		return revision{}, notPinned(NoRevision, "ReplicaSet "+ref.Name+"'s template has another stamp"), false
	}
	return revision{
		template: rs.Spec.Template,
		owner:    metav1.OwnerReference{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: rs.Name, UID: rs.UID},
		// The Deployment controller copies the Deployment's annotations
		// to its ReplicaSets; the template's own count too.
		optedOut: !pinning.WorkloadPins(rs.Annotations) || !pinning.WorkloadPins(rs.Spec.Template.Annotations),
	}, Result{}, true
}
