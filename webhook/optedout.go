package webhook

import (
	"context"
	"fmt"

	admissionv1 "k8s.io/api/admission/v1"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/confighash/confighash/internal/contract"
	"github.com/confighash/confighash/internal/workload"
)

// foreignRemovedMessage answers a write to an opted-out workload that set a
// stamp confighash does not write.
const foreignRemovedMessage = "opted out by annotation " + contract.InjectionAnnotation + "; removed a " + contract.ChecksumAnnotation + " of a format confighash does not write"

// optedOut answers a write to an opted-out workload: confighash stamps
// nothing and leaves the object alone, except that a foreign stamp the write
// sets (on CREATE, or different from the stored one) is removed. One the
// object already holds is left, so that an opted-out workload never rolls
// because of confighash; once opted back in, it gets a fresh stamp (see
// keepStamp). t is the object's template as workload.ReadsOf found it: zero
// when it has none.
func (h *Handler) optedOut(ctx context.Context, kind workload.Kind, t workload.Template, req admission.Request) (admission.Response, outcome) {
	allowed := admission.Allowed("opted out by annotation " + contract.InjectionAnnotation)
	if t.Meta == nil || !foreign(t.Checksum()) {
		return allowed, answerUnchanged
	}
	if req.Operation == admissionv1.Update {
		oldObj, err := h.decode(kind, req.OldObject)
		if err != nil {
			return unhandled(ctx, fmt.Errorf("decoding old %s: %w", kind.GVK.Kind, err), "decoding the old object"), answerError
		}
		if ot, ok := kind.PodTemplate(oldObj); ok && ot.Checksum() == t.Checksum() {
			return allowed, answerUnchanged
		}
	}
	return stampPatch(kind, t, "", foreignRemovedMessage), answerRestored
}
