package webhook

import (
	"context"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/confighash/confighash/internal/contract"
	"github.com/confighash/confighash/internal/pinning"
	"github.com/confighash/confighash/internal/sources"
	"github.com/confighash/confighash/internal/waves"
	"github.com/confighash/confighash/internal/workload"
)

// Revisions tells a rollback from an edit (pinner.Pinner, reading live).
type Revisions interface {
	// LiveRevision reports whether tmpl is the template of one of the live
	// revisions owner controls in namespace (paged and bounded); with
	// annotations set, a ReplicaSet's annotations must be those as
	// `kubectl rollout undo` copies them.
	LiveRevision(ctx context.Context, namespace string, owner metav1.OwnerReference, selector *metav1.LabelSelector, tmpl corev1.PodTemplateSpec, annotations map[string]string) (bool, error)
	// Sealed reports whether stamp has a complete set of verified
	// snapshots for the sources tmpl reads.
	Sealed(ctx context.Context, namespace, stamp string, tmpl corev1.PodTemplateSpec) (bool, error)
}

// rolledBackMessage answers a rollback; rolledBackWarning tells the user
// (kubectl prints it) what happens next.
const rolledBackMessage = "rolled back: kept the revision's stamp, whose pods read its pinned config"

var rolledBackWarning = workload.Warning("rolled back to a revision whose pods read its pinned config; " +
	"confighash keeps it there (" + contract.HaltAnnotation + " " + waves.RolledBack + ") until a ConfigMap or Secret it reads changes again, or " +
	contract.HaltAnnotation + " is set to " + contract.HaltReleased)

// rollback answers an UPDATE that puts a pinned workload back on one of its
// live revisions: t, its new template, stamp included, is the template of
// a ReplicaSet or ControllerRevision it controls, and that stamp, which is
// not what its sources give now (fresh, asked only once the rest holds), has
// its verified snapshots. Its pods then read the revision's content, so the
// stamp stays as it is, and the answer records a halt with reason
// waves.RolledBack, sealed for the workload, naming the content its sources
// hold now: the hook does not roll it forward until one of them changes or
// the halt is released. ok is false for anything else, which is stamped as
// any edit: an old stamp copied into a manifest matches no live revision
// (or one whose snapshots are gone), so it cannot keep a workload off its
// config.
//
// Why the webhook writes the halt, in the same patch: it is the one writer
// that sees the rollback as such (the template alone, after the write, is
// indistinguishable from an edit), there is nothing between the undo and
// the record for the hook's re-check to race, and the seal needs the key,
// which only confighash holds, so no tenant can write one by hand.
//
// The work is bounded: only for pinning namespaces, only when the stamp
// would change, one bounded LIST of the workload's revisions and, for a
// match, one of the stamp's snapshots. A dry run is not read live (it is
// stamped as today).
func (h *Handler) rollback(ctx context.Context, kind workload.Kind, obj client.Object, reads workload.Reads, edits recordEdits, req admission.Request, fresh func(context.Context) (string, bool)) (admission.Response, outcome, bool) {
	t := reads.Template
	stamp := t.Checksum()
	// kubectl's undo (and Argo Rollouts' plugin) name no field manager;
	// apply, edit, patch, replace, Helm, Argo CD and Flux all name one, so
	// their writes of a manifest holding a copied stamp stay edits.
	if h.Revisions == nil || t.Meta == nil || (req.DryRun != nil && *req.DryRun) || !currentFormat(stamp) || fieldManager(req) != "" {
		return admission.Response{}, "", false
	}
	if !pinning.WorkloadPins(obj.GetAnnotations()) || !pinning.WorkloadPins(t.Meta.Annotations) || !namespacePins(ctx, h.Policy, h.Namespaces, req.Namespace) {
		return admission.Response{}, "", false
	}
	owner, selector, ok := revisionOwner(kind, obj)
	if !ok {
		return admission.Response{}, "", false
	}
	tmpl := corev1.PodTemplateSpec{ObjectMeta: *t.Meta, Spec: *t.Spec}
	logger := log.FromContext(ctx)
	var copied map[string]string
	if _, ok := obj.(*appsv1.Deployment); ok {
		// kubectl's undo of a Deployment also puts the ReplicaSet's
		// annotations on it; a sync of a manifest holding a copied stamp
		// keeps the Deployment's own (the hook's rollout record, newer than
		// the ReplicaSet's copy, among them), so it is not taken for one.
		if copied = obj.GetAnnotations(); copied == nil {
			copied = map[string]string{}
		}
	}
	live, err := h.Revisions.LiveRevision(ctx, req.Namespace, owner, selector, tmpl, copied)
	if err != nil {
		logger.Error(err, "listing the workload's revisions; stamping it as an edit")
	}
	if !live {
		return admission.Response{}, "", false
	}
	sealed, err := h.Revisions.Sealed(ctx, req.Namespace, stamp, tmpl)
	if err != nil {
		logger.Error(err, "listing the revision's snapshots; stamping it as an edit")
	}
	if !sealed {
		return admission.Response{}, "", false
	}
	if sum, ok := fresh(ctx); !ok || sum == stamp {
		return admission.Response{}, "", false
	}
	ids, err := waves.ContentIDs(h.Key, req.Namespace, reads.Refs, h.Sources.Lookup(sources.PreferLive(ctx), req.Namespace))
	if err != nil || len(ids) == 0 {
		return admission.Response{}, "", false
	}
	halt := contract.Halt{Since: time.Now().UTC().Truncate(time.Second), Changes: waves.ChangesOf(ids), Reason: waves.RolledBack}
	s := contract.Subject{Kind: kind.Name(), Namespace: req.Namespace, Name: obj.GetName(), UID: string(obj.GetUID())}
	value := halt.Sealed(h.Key, s)
	if edits == nil {
		edits = recordEdits{}
	}
	edits[contract.HaltAnnotation] = &value
	logger.Info("rolled back to a live revision; keeping its stamp", "workload", obj.GetName(), "stamp", stamp)
	return edits.onto(admission.Allowed(rolledBackMessage), obj.GetAnnotations()).WithWarnings(rolledBackWarning), answerUnchanged, true
}

// revisionOwner is the owner reference a revision of obj carries, and the
// selector its revisions are labelled for: Deployments, StatefulSets,
// DaemonSets and Argo Rollouts; false for every other kind.
func revisionOwner(kind workload.Kind, obj client.Object) (metav1.OwnerReference, *metav1.LabelSelector, bool) {
	ref := metav1.OwnerReference{APIVersion: kind.GVK.GroupVersion().String(), Kind: kind.GVK.Kind, Name: obj.GetName(), UID: obj.GetUID()}
	switch o := obj.(type) {
	case *appsv1.Deployment:
		return ref, o.Spec.Selector, true
	case *appsv1.StatefulSet:
		return ref, o.Spec.Selector, true
	case *appsv1.DaemonSet:
		return ref, o.Spec.Selector, true
	case *unstructured.Unstructured:
		if kind.GVK.Group != "argoproj.io" || kind.GVK.Kind != "Rollout" {
			return ref, nil, false
		}
		m, found, err := unstructured.NestedMap(o.Object, "spec", "selector")
		if !found || err != nil {
			return ref, nil, false
		}
		sel := &metav1.LabelSelector{}
		if runtime.DefaultUnstructuredConverter.FromUnstructured(m, sel) != nil {
			return ref, nil, false
		}
		return ref, sel, true
	}
	return ref, nil, false
}
