package workload

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/confighash/confighash/hasher"
)

// Skip says why confighash reads nothing for a workload: it neither stamps
// it, nor re-stamps it, nor indexes it by its sources.
type Skip string

const (
	// NotSkipped means the workload reads Reads.Refs.
	NotSkipped Skip = ""
	// SkipOptedOut means the workload carries the opt-out annotation.
	SkipOptedOut Skip = "opted out"
	// SkipOwned means an object of a kind whose template is fixed once created
	// (a Job, a Pod) that a controller owns. It was created from its
	// owner's template, which carries the stamp.
	SkipOwned Skip = "owned"
	// SkipNoTemplate means the object has no pod template of its own (a Rollout
	// that reads a Deployment's through spec.workloadRef, a custom object
	// without one).
	SkipNoTemplate Skip = "no template"
	// SkipOverLimit means the template reads more than MaxSources sources.
	SkipOverLimit Skip = "over the sources limit"
)

// Reads is what a workload's pods read, as confighash sees it.
type Reads struct {
	// Template is the object's pod template: zero when it has none
	// (SkipNoTemplate, or an opted-out object without one), or is owned.
	Template Template
	// Refs are the sources the template reads (hasher.References), with
	// RefErr the malformed include/exclude entries, which are reported to
	// the user and otherwise ignored. Both are set with Template, even when
	// Skip says confighash acts on none of it: the status command reports
	// what an opted-out template, or one over the limit, reads.
	Refs   []hasher.Reference
	RefErr error
	// Skip says why confighash reads nothing for the workload, or is
	// NotSkipped.
	Skip Skip
}

// ReadsOf is the one answer to "what does this workload read", for obj, an
// object of kind k. The webhook stamps, the hook re-stamps and indexes, and
// the status command reports through it, so that they agree on which
// workloads are left alone: a workload one of them left alone and another
// stamped would roll when nothing it reads changed.
//
// A Skip is decided in this order: an opt-out first (it is the user's
// word, whatever else holds), then ownership and the template; the sources
// limit last, since it needs the references.
func ReadsOf(k Kind, obj client.Object) Reads {
	annotations := obj.GetAnnotations()
	var r Reads
	if OptedOut(annotations) {
		r.Skip = SkipOptedOut
	} else if !k.Mutable && metav1.GetControllerOf(obj) != nil {
		// Decided before the template is looked at: most Pods are created
		// by a controller, and need no references worked out.
		return Reads{Skip: SkipOwned}
	}
	t, ok := k.PodTemplate(obj)
	if !ok {
		if r.Skip == NotSkipped {
			r.Skip = SkipNoTemplate
		}
		return r
	}
	r.Template = t
	r.Refs, r.RefErr = hasher.References(t.Spec, annotations)
	if r.Skip == NotSkipped && len(r.Refs) > MaxSources {
		r.Skip = SkipOverLimit
	}
	return r
}
