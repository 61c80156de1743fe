package webhook

import (
	"context"
	"errors"
	"net/http"

	"gomodules.xyz/jsonpatch/v2"
	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/confighash/confighash/internal/injection"
	"github.com/confighash/confighash/internal/pinner"
	"github.com/confighash/confighash/internal/pinning"
)

// Pinner decides a new pod's snapshots (pinner.Pinner).
type Pinner interface {
	Pin(ctx context.Context, pod *corev1.Pod, dryRun bool) pinner.Result
}

// PinHandler points the new pods of pinning namespaces at the snapshots
// their revision's stamp names, so that every pod of a revision reads that
// content whatever starts it. It implements admission.Handler.
//
// It never denies: a pod that cannot be pinned is admitted as it is, and
// its pinning.PodAnnotation says why. Its answer changes only the names the
// pod reads and that annotation.
type PinHandler struct {
	Decoder admission.Decoder
	// Policy and Namespaces as in Handler; a namespace must also carry
	// pinning.NamespaceLabel.
	Policy     injection.Policy
	Namespaces injection.Getter
	Pinner     Pinner
	// Callers as in Handler.
	Callers *Callers
	// Metrics, when set, counts the pods by result.
	Metrics *Metrics
	// Unpinned, when set, tells the workload of a pod admitted unpinned.
	Unpinned *UnpinnedEvents
}

// Handle answers one admission request for a pod.
func (h *PinHandler) Handle(ctx context.Context, req admission.Request) admission.Response {
	if req.UID == "" {
		return admission.Errored(http.StatusBadRequest, errors.New("AdmissionReview has no request uid"))
	}
	if h.Callers.rejects(ctx) {
		resp, _ := unauthenticated()
		return resp
	}
	if !h.pins(ctx, req.Namespace) {
		return admission.Allowed(notServedMessage)
	}
	if req.Operation != admissionv1.Create || req.Kind.Group != "" || req.Kind.Kind != "Pod" || req.SubResource != "" {
		return admission.Allowed("confighash pins only new pods")
	}
	pod := &corev1.Pod{}
	if err := h.Decoder.DecodeRaw(req.Object, pod); err != nil {
		return admission.Allowed("not pinned: the pod could not be decoded")
	}
	pod.Namespace = req.Namespace
	res := h.Pinner.Pin(ctx, pod, req.DryRun != nil && *req.DryRun)
	var changed []pinning.Rewritten
	if res.Reason == pinner.Pinned {
		if err := pinning.Covers(&pod.Spec, res.Held); err != nil {
			// Called again after another webhook added reads (the earlier
			// call marked the pod pinned): what it pointed at snapshots
			// goes back, so the pod is unpinned whole, as its annotation
			// will say. On a first call a snapshot's name in the pod is
			// the pod's own.
			if pod.Annotations[pinning.PodAnnotation] == "true" {
				changed = pinning.Unpin(pod.Spec.DeepCopy(), res.Snapshots)
			}
			res = pinner.Result{Reason: pinner.NotCovered, Detail: err.Error(), Writes: res.Writes}
		} else {
			changed = pinning.Rewrite(pod.Spec.DeepCopy(), res.Snapshots)
		}
	}
	h.Metrics.pinned(res.Reason, res.Writes)
	h.Unpinned.report(pod, res)
	if res.Reason != pinner.Pinned {
		log.FromContext(ctx).Info("pod admitted unpinned", "namespace", req.Namespace, "pod", pod.GenerateName+pod.Name, "reason", res.Reason, "detail", res.Detail)
	}
	return pinPatch(pod, res.Reason, changed)
}

// pins applies the namespace policy, then the pinning label.
func (h *PinHandler) pins(ctx context.Context, name string) bool {
	return namespacePins(ctx, h.Policy, h.Namespaces, name)
}

// namespacePins applies policy to namespace name, read through g, then the
// pinning label: the one test of whether a namespace pins, for new pods and
// for rollbacks alike. A namespace that cannot be read does not pin.
func namespacePins(ctx context.Context, policy injection.Policy, g injection.Getter, name string) bool {
	if g == nil {
		return false
	}
	d, labels, err := policy.CheckLabels(ctx, g, name)
	if err != nil {
		log.FromContext(ctx).Error(err, "reading the namespace; it does not pin", "namespace", name)
	}
	return d.Serves && pinning.NamespacePins(labels)
}

// pinPatch replaces exactly the names that changed and sets the pod's
// pinning annotation: "true", or why not.
func pinPatch(pod *corev1.Pod, reason pinner.Reason, changed []pinning.Rewritten) admission.Response {
	value, msg := "true", "pinned"
	if reason != pinner.Pinned {
		value, msg = "false: "+string(reason), "not pinned: "+string(reason)
	}
	ops := make([]jsonpatch.JsonPatchOperation, 0, len(changed)+1)
	for _, c := range changed {
		ops = append(ops, jsonpatch.NewOperation("replace", "/spec"+c.Path, c.To))
	}
	if pod.Annotations == nil {
		ops = append(ops, jsonpatch.NewOperation("add", "/metadata/annotations", map[string]string{pinning.PodAnnotation: value}))
	} else {
		ops = append(ops, jsonpatch.NewOperation("add", "/metadata/annotations/"+escape(pinning.PodAnnotation), value))
	}
	return admission.Patched(msg, ops...)
}
