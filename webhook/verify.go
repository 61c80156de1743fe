package webhook

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/confighash/confighash/hasher"
	"github.com/confighash/confighash/workload"
)

// verifying reports whether req asks for a verdict on the stored stamp: a
// dry-run UPDATE whose object carries workload.VerifyStampAnnotation.
// Outside a dry run the annotation means nothing.
func verifying(req admission.Request, obj client.Object) bool {
	_, ok := obj.GetAnnotations()[workload.VerifyStampAnnotation]
	return ok && req.DryRun != nil && *req.DryRun
}

// verifyStored answers with the stamp the hook would leave on the stored
// object: the stored one while it is current, else the fresh one. A
// dry-run CREATE cannot tell `confighash status` that a legacy v1 stamp is
// still current, because it always gets v2; this can, so that status
// agrees with the hook.
//
// Only the stored stamp, which the apiserver sends as the old object, is
// ever compared with the content, never one the request carries: comparing
// a caller's v1 stamp (v1 does not bind the namespace) would let anyone test
// a stamp copied from another namespace against this one's Secrets. Stored
// v1 stamps can only be confighash's own from before v2, since the webhook
// lets no write set one.
func (h *Handler) verifyStored(ctx context.Context, ns string, kind workload.Kind, obj client.Object, t, old workload.Template) (admission.Response, outcome) {
	sum, warnings, err := h.checksum(ctx, ns, obj, t, &old)
	if err != nil {
		// The error stays in the log; it may name a Secret.
		log.FromContext(ctx).Error(err, "computing checksum to verify a stored stamp")
		return admission.Allowed("stored stamp not verified"), answerKept
	}
	if stored := old.Checksum(); hasher.Compare(stored, sum) == hasher.Legacy && legacyCurrent(ctx, h, ns, obj, t, stored) {
		sum = stored
	}
	if sum == t.Checksum() {
		return admission.Allowed("stored stamp is current").WithWarnings(warnings...), answerKept
	}
	return stampPatch(kind, t, sum, "verified the stored stamp").WithWarnings(warnings...), answerStamped
}

// legacyCurrent reports whether a stored legacy v1 stamp still matches the
// content. LEGACY: remove with hasher.LegacyChecksumV1.
func legacyCurrent(ctx context.Context, h *Handler, ns string, obj client.Object, t workload.Template, stored string) bool {
	refs, _ := hasher.References(t.Spec, obj.GetAnnotations())
	v1, err := hasher.LegacyChecksumV1(h.Key, refs, h.Sources.Lookup(ctx, ns))
	if err != nil {
		log.FromContext(ctx).Error(err, "computing legacy v1 checksum to verify a stored stamp")
		return false
	}
	return v1.Checksum == stored
}
