package workload

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/confighash/confighash/hasher"
	"github.com/confighash/confighash/internal/contract"
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
	// SkipOverLimit means the template reads more than MaxSources sources,
	// or more than MaxReferenceBytes of them (see LimitMessage).
	SkipOverLimit Skip = "over the sources limit"
	// SkipNotHeld means the object is the cache's identity copy
	// (IdentityObject): its namespace was not served when it was cached,
	// and what it reads is not known.
	SkipNotHeld Skip = "not held (its namespace was not served when cached)"
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
// limits last, since they need the references. An object SlimObject found
// over the limits keeps no references, only a mark that says so, which is
// read here: the hook's cached copy is skipped exactly as the whole object
// is.
func ReadsOf(k Kind, obj client.Object) Reads {
	annotations := obj.GetAnnotations()
	if annotations[slimmedKey] == slimIdentity {
		// Decided first: an identity copy has an empty template, which
		// would read as reading nothing.
		return Reads{Skip: SkipNotHeld}
	}
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
	if r.Skip == NotSkipped && (overLimit(r.Refs, annotations) || slimmedOverLimit(annotations)) {
		r.Skip = SkipOverLimit
	}
	return r
}

// overLimit reports whether a template reading refs, with the include and
// exclude annotations of annotations, is over MaxSources or
// MaxReferenceBytes.
func overLimit(refs []hasher.Reference, annotations map[string]string) bool {
	return len(refs) > MaxSources || referenceBytes(refs, annotations) > MaxReferenceBytes
}

// referenceBytes is the size MaxReferenceBytes bounds: every source name
// and key of refs, each with entryCost, and the include and exclude
// annotations as written. It stops counting once past the bound.
func referenceBytes(refs []hasher.Reference, annotations map[string]string) int {
	n := len(annotations[contract.IncludeAnnotation]) + len(annotations[contract.ExcludeAnnotation])
	for _, r := range refs {
		n += entryCost + len(r.Name)
		for _, k := range r.Keys {
			n += entryCost + len(k)
		}
		if n > MaxReferenceBytes {
			return n
		}
	}
	return n
}

// LimitMessage says which bound a template SkipOverLimit left alone is
// over, for the webhook's warning.
func (r Reads) LimitMessage() string {
	if len(r.Refs) > MaxSources {
		return fmt.Sprintf("template reads %d sources, more than the limit of %d; not stamped", len(r.Refs), MaxSources)
	}
	return fmt.Sprintf("template's references (names, keys, include and exclude) take more than the limit of %d bytes; not stamped", MaxReferenceBytes)
}
