package webhook

import (
	"context"
	"fmt"

	admissionv1 "k8s.io/api/admission/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/confighash/confighash/hasher"
	"github.com/confighash/confighash/workload"
)

// currentFormat reports whether stamp has the format confighash writes now.
// A stamp-only write under confighash's field manager passes only with such
// a stamp.
func currentFormat(stamp string) bool {
	_, ok := hasher.StampKeyID(stamp)
	return ok
}

// foreign reports whether stamp is one confighash does not write: a legacy
// v1 stamp (releases before v2) or anything else that is not of the current
// format.
//
// No write keeps one. v1 does not bind the namespace, so a v1 stamp copied
// from another namespace that confighash kept, or compared with content,
// would let anyone test a guess of that namespace's Secrets with a
// same-named Secret of their own. Nothing in confighash compares a foreign
// stamp any more: it is treated as differing, like no stamp at all. The
// webhook cannot tell confighash's own v1 stamps from copied ones (a stored
// stamp may have been written while the webhook was not called: namespace
// unlabelled, workload opted out, webhook down), and a review POSTed to the
// webhook carries whatever old object its caller wrote.
func foreign(stamp string) bool {
	return stamp != "" && !currentFormat(stamp)
}

// foreignRemovedMessage answers a write to an opted-out workload that set a
// stamp confighash does not write.
const foreignRemovedMessage = "opted out by annotation " + workload.InjectionAnnotation + "; removed a " + workload.ChecksumAnnotation + " of a format confighash does not write"

// optedOut answers a write to an opted-out workload: confighash stamps
// nothing and leaves the object alone, except that a foreign stamp the write
// sets (on CREATE, or different from the stored one) is removed. One the
// object already holds is left, so that an opted-out workload never rolls
// because of confighash; once opted back in, it gets a fresh stamp (see
// keepStamp).
func (h *Handler) optedOut(ctx context.Context, kind workload.Kind, obj client.Object, req admission.Request) (admission.Response, outcome) {
	allowed := admission.Allowed("opted out by annotation " + workload.InjectionAnnotation)
	t, ok := kind.PodTemplate(obj)
	if !ok || !foreign(t.Checksum()) {
		return allowed, answerKept
	}
	if req.Operation == admissionv1.Update {
		oldObj, err := h.decode(kind, req.OldObject)
		if err != nil {
			return unhandled(ctx, fmt.Errorf("decoding old %s: %w", kind.GVK.Kind, err), "decoding the old object"), answerError
		}
		if ot, ok := kind.PodTemplate(oldObj); ok && ot.Checksum() == t.Checksum() {
			return allowed, answerKept
		}
	}
	return stampPatch(kind, t, "", foreignRemovedMessage), answerRestored
}
