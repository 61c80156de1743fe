package pinner

import (
	"context"
	"encoding/json"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/confighash/confighash/hasher"
	"github.com/confighash/confighash/internal/pinning"
)

// revisionPageSize and revisionPages bound the LIST that looks for a
// workload's live revisions: the controllers keep revisionHistoryLimit of
// them (10 by default), so four pages of 16 cover any usual history; a
// workload with more answers as if the template were none of them, which
// re-stamps it as an edit.
const (
	revisionPageSize = 16
	revisionPages    = 4
)

// hashLabels are the labels a controller adds to a revision's template
// (the Deployment's and Argo Rollouts' ReplicaSets): compared as the
// controllers compare templates, without them.
var hashLabels = []string{appsv1.DefaultDeploymentUniqueLabelKey, "rollouts-pod-template-hash"}

// LiveRevision reports whether tmpl is the template of one of the live
// revisions that owner controls in namespace: the ReplicaSets of a
// Deployment or an Argo Rollout, the ControllerRevisions of a StatefulSet
// or a DaemonSet, listed live by the workload's selector, paged and
// bounded. Templates are compared as kubectl's undo and the Deployment
// controller compare them: semantically, without the hash label. With
// annotations set (a Deployment's own, as written), the ReplicaSet's
// annotations must also be those, as `kubectl rollout undo` copies them
// (kubectlKept aside): the undo's mark, which a manifest synced again with
// a stamp copied into it does not bear.
func (p *Pinner) LiveRevision(ctx context.Context, namespace string, owner metav1.OwnerReference, selector *metav1.LabelSelector, tmpl corev1.PodTemplateSpec, annotations map[string]string) (bool, error) {
	if selector == nil {
		return false, nil
	}
	sel, err := metav1.LabelSelectorAsSelector(selector)
	if err != nil || sel.Empty() {
		// An empty selector would list the namespace.
		return false, err
	}
	var list client.ObjectList
	switch owner.Kind {
	case "Deployment", "Rollout":
		list = &appsv1.ReplicaSetList{}
	case "StatefulSet", "DaemonSet":
		list = &appsv1.ControllerRevisionList{}
	default:
		return false, nil
	}
	want := withoutHash(tmpl)
	cont := ""
	for range revisionPages {
		opts := []client.ListOption{client.InNamespace(namespace), client.MatchingLabelsSelector{Selector: sel}, client.Limit(revisionPageSize)}
		if cont != "" {
			opts = append(opts, client.Continue(cont))
		}
		if err := p.Client.List(ctx, list, opts...); err != nil {
			return false, err
		}
		if matchesRevision(list, owner, want, annotations) {
			return true, nil
		}
		if cont = list.(metav1.ListInterface).GetContinue(); cont == "" {
			break
		}
	}
	return false, nil
}

// matchesRevision reports whether one of list's revisions that owner
// controls holds want (and, for a ReplicaSet, annotations; nil: any).
func matchesRevision(list client.ObjectList, owner metav1.OwnerReference, want corev1.PodTemplateSpec, annotations map[string]string) bool {
	controlled := func(meta *metav1.ObjectMeta) bool {
		c := metav1.GetControllerOfNoCopy(meta)
		return c != nil && c.UID == owner.UID
	}
	switch l := list.(type) {
	case *appsv1.ReplicaSetList:
		for i := range l.Items {
			rs := &l.Items[i]
			if controlled(&rs.ObjectMeta) && equality.Semantic.DeepEqual(withoutHash(rs.Spec.Template), want) &&
				(annotations == nil || undoCopied(rs.Annotations, annotations)) {
				return true
			}
		}
	case *appsv1.ControllerRevisionList:
		for i := range l.Items {
			if !controlled(&l.Items[i].ObjectMeta) {
				continue
			}
			// The data is the patch that restores the revision: the
			// template whole, under spec.
			var data struct {
				Spec struct {
					Template corev1.PodTemplateSpec `json:"template"`
				} `json:"spec"`
			}
			if json.Unmarshal(l.Items[i].Data.Raw, &data) == nil && equality.Semantic.DeepEqual(withoutHash(data.Spec.Template), want) {
				return true
			}
		}
	}
	return false
}

// kubectlKept are the annotations `kubectl rollout undo` keeps from the
// Deployment rather than copying them from the ReplicaSet (kubectl's
// annotationsToSkip): the last applied configuration and the Deployment
// controller's own.
var kubectlKept = map[string]bool{
	corev1.LastAppliedConfigAnnotation:          true,
	"deployment.kubernetes.io/revision":         true,
	"deployment.kubernetes.io/revision-history": true,
	"deployment.kubernetes.io/desired-replicas": true,
	"deployment.kubernetes.io/max-replicas":     true,
	"deprecated.deployment.rollback.to":         true,
}

// undoCopied reports whether the Deployment's annotations are the
// ReplicaSet's, as the undo writes them.
func undoCopied(rs, deployment map[string]string) bool {
	n := 0
	for k, v := range deployment {
		if kubectlKept[k] {
			continue
		}
		if w, ok := rs[k]; !ok || w != v {
			return false
		}
		n++
	}
	for k := range rs {
		if !kubectlKept[k] {
			n--
		}
	}
	return n == 0
}

func withoutHash(t corev1.PodTemplateSpec) corev1.PodTemplateSpec {
	c := *t.DeepCopy()
	for _, l := range hashLabels {
		delete(c.Labels, l)
	}
	return c
}

// Sealed reports whether stamp has its snapshots: for the sources tmpl
// reads, a complete set sealed to stamp, each verified, as a pod of the
// revision would be pinned to. Only then does the stamp name content that
// its pods can still read.
func (p *Pinner) Sealed(ctx context.Context, namespace, stamp string, tmpl corev1.PodTemplateSpec) (bool, error) {
	label, err := pinning.StampLabelKey(stamp)
	if err != nil {
		// Not a stamp confighash writes: nothing can be sealed to it.
		return false, nil //nolint:nilerr // a wrong stamp is an answer, not a failure
	}
	refs, _ := hasher.References(&tmpl.Spec, tmpl.Annotations)
	if len(refs) == 0 {
		return false, nil
	}
	have, err := p.sealedSet(ctx, namespace, stamp, label, refs)
	if err != nil {
		return false, err
	}
	return complete(have, refs), nil
}
