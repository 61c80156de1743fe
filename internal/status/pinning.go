package status

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/confighash/confighash/internal/contract"
	"github.com/confighash/confighash/internal/pinning"
)

// pinningPodLimit bounds the pods status reads per workload: one page of
// metadata. A bigger workload is counted on its first pinningPodLimit pods,
// and says so.
const pinningPodLimit = 200

// Pinning says how a workload's pods stand with pinning, in a namespace
// labelled confighash.dev/pinning=enabled: which read their revision's
// snapshots, which were admitted unpinned and why.
type Pinning struct {
	// OptedOut is set when the workload or its template carries
	// confighash.dev/pin: "off"; nothing else is counted then.
	OptedOut bool `json:"optedOut,omitempty"`
	// Pods is how many pods were counted.
	Pods int `json:"pods"`
	// Pinned pods read their revision's snapshots.
	Pinned int `json:"pinned"`
	// Unpinned counts the pods admitted unpinned, by reason (the pod's
	// confighash.dev/pinned annotation: "false: REASON").
	Unpinned map[string]int `json:"unpinned,omitempty"`
	// NotSeen pods carry a stamp but no such annotation: the pod webhook,
	// which marks every stamped pod it answers, did not answer for them
	// (down, timed out, or the pod is older than pinning in its
	// namespace). They read the live ConfigMaps and Secrets.
	NotSeen int `json:"notSeen,omitempty"`
	// Unstamped pods carry no stamp, which the pod webhook needs to pin:
	// made while the stamp webhook was down, or from an unstamped
	// template. They read the live ConfigMaps and Secrets.
	Unstamped int `json:"unstamped,omitempty"`
	// MarkInTemplate is set when the workload's pod template itself
	// carries the annotation: its pods start with that copy, so a pod the
	// webhook did not see looks marked, and the counts cannot be trusted.
	MarkInTemplate bool `json:"markInTemplate,omitempty"`
	// OtherRevisions counts the pods whose stamp is not the workload's
	// (an older or newer revision still running, rolled back or waiting).
	OtherRevisions int `json:"otherRevisions,omitempty"`
	// Truncated is set when the workload has more pods than were counted.
	Truncated bool `json:"truncated,omitempty"`
	// Error says why the pods could not be listed.
	Error string `json:"error,omitempty"`
}

// pinningOf gathers Pinning for obj, or nil when its namespace does not pin
// (labels) or its pods cannot be told by a selector (a CronJob).
func pinningOf(ctx context.Context, c client.Reader, obj client.Object, stamp string, labels map[string]string, templateAnnotations map[string]string) *Pinning {
	if !pinning.NamespacePins(labels) {
		return nil
	}
	if !pinning.WorkloadPins(obj.GetAnnotations()) || !pinning.WorkloadPins(templateAnnotations) {
		return &Pinning{OptedOut: true}
	}
	sel := selectorOf(obj)
	if sel == nil {
		return nil
	}
	selector, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil || selector.Empty() {
		return nil
	}
	pods := &metav1.PartialObjectMetadataList{}
	pods.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("PodList"))
	if err := c.List(ctx, pods, client.InNamespace(obj.GetNamespace()), client.MatchingLabelsSelector{Selector: selector}, client.Limit(pinningPodLimit)); err != nil {
		return &Pinning{Error: fmt.Sprintf("listing its pods: %v", err)}
	}
	// The apiserver honours the limit; a reader that does not is cut too.
	truncated := pods.Continue != "" || len(pods.Items) > pinningPodLimit
	pods.Items = pods.Items[:min(len(pods.Items), pinningPodLimit)]
	annotations := make([]map[string]string, 0, len(pods.Items))
	for i := range pods.Items {
		if metav1.IsControlledBy(&pods.Items[i], obj) || ownedThroughRevision(&pods.Items[i]) {
			annotations = append(annotations, pods.Items[i].Annotations)
		}
	}
	p := countPinning(annotations, stamp)
	p.Truncated = truncated
	_, p.MarkInTemplate = templateAnnotations[pinning.PodAnnotation]
	return &p
}

// ownedThroughRevision reports whether a pod is a revision's (a
// ReplicaSet's, for a Deployment or a Rollout): the selector found it, and
// its controller is of a kind that keeps revisions.
func ownedThroughRevision(pod *metav1.PartialObjectMetadata) bool {
	ref := metav1.GetControllerOfNoCopy(pod)
	return ref != nil && ref.Kind == "ReplicaSet"
}

// countPinning counts pods (their annotations) against the workload's stamp.
func countPinning(pods []map[string]string, stamp string) Pinning {
	p := Pinning{Pods: len(pods)}
	for _, a := range pods {
		if a[contract.ChecksumAnnotation] != stamp {
			p.OtherRevisions++
		}
		switch kind, reason := classifyPod(a); kind {
		case podPinned:
			p.Pinned++
		case podNotSeen:
			p.NotSeen++
		case podUnstamped:
			p.Unstamped++
		default:
			if p.Unpinned == nil {
				p.Unpinned = map[string]int{}
			}
			p.Unpinned[reason]++
		}
	}
	return p
}

// podPin is what a pod's annotations say of its pinning.
type podPin int

const (
	podPinned podPin = iota
	// podUnpinned: the pod webhook admitted it unpinned, and said why.
	podUnpinned
	// podNotSeen: stamped, so the pod webhook would have marked it had it
	// answered; it did not.
	podNotSeen
	// podUnstamped: no stamp; the pod webhook leaves such pods alone
	// (its match condition), so their lack of a mark says nothing of it.
	podUnstamped
)

// classifyPod classifies one pod by its annotations, and for an unpinned
// pod gives the reason its mark names ("unknown" for one unreadable or
// too long to show). A mark outranks the stamp: the webhook marks only
// stamped pods, so a marked pod without one lost its stamp afterwards.
func classifyPod(a map[string]string) (podPin, string) {
	v, marked := a[pinning.PodAnnotation]
	switch {
	case marked && v == "true":
		return podPinned, ""
	case marked:
		reason := strings.TrimSpace(strings.TrimPrefix(v, "false:"))
		if reason == "" || len(reason) > 64 || !strings.HasPrefix(v, "false:") {
			reason = "unknown"
		}
		return podUnpinned, reason
	case a[contract.ChecksumAnnotation] == "":
		return podUnstamped, ""
	}
	return podNotSeen, ""
}

// selectorOf is the pod selector of a Deployment, StatefulSet, DaemonSet or
// custom kind with spec.selector; nil for anything else.
func selectorOf(obj client.Object) *metav1.LabelSelector {
	switch o := obj.(type) {
	case *appsv1.Deployment:
		return o.Spec.Selector
	case *appsv1.StatefulSet:
		return o.Spec.Selector
	case *appsv1.DaemonSet:
		return o.Spec.Selector
	case *unstructured.Unstructured:
		m, found, err := unstructured.NestedMap(o.Object, "spec", "selector")
		if !found || err != nil {
			return nil
		}
		sel := &metav1.LabelSelector{}
		if runtime.DefaultUnstructuredConverter.FromUnstructured(m, sel) != nil {
			return nil
		}
		return sel
	}
	return nil
}

// describePinning is the details line for p, not nil.
func describePinning(p *Pinning) string {
	switch {
	case p.OptedOut:
		return "opted out (" + pinning.PinAnnotation + ": " + pinning.PinOff + "): its pods read the live ConfigMaps and Secrets"
	case p.Error != "":
		return "unknown: " + p.Error
	case p.Pods == 0:
		return "no pods"
	}
	s := fmt.Sprintf("%d of %d pods pinned", p.Pinned, p.Pods)
	if p.Truncated {
		s = fmt.Sprintf("%d of the first %d pods pinned", p.Pinned, p.Pods)
	}
	for _, r := range slices.Sorted(maps.Keys(p.Unpinned)) {
		s += fmt.Sprintf("; %d unpinned (%s)", p.Unpinned[r], r)
	}
	if p.NotSeen > 0 {
		s += fmt.Sprintf("; %d not seen by the pod webhook (stamped but unmarked: admitted while it was down, or before the namespace pinned)", p.NotSeen)
	}
	if p.Unstamped > 0 {
		s += fmt.Sprintf("; %d unstamped (not pinnable)", p.Unstamped)
	}
	if p.OtherRevisions > 0 {
		s += fmt.Sprintf("; %d of another revision", p.OtherRevisions)
	}
	if p.MarkInTemplate {
		s += "; its pod template carries " + pinning.PodAnnotation + ", which its pods copy: a pod the webhook did not see looks marked, so these counts cannot be trusted; remove it from the template"
	}
	return s
}
