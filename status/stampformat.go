package status

import (
	"context"
	"fmt"
	"maps"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/confighash/confighash/hasher"
	"github.com/confighash/confighash/workload"
)

// StoredVerifier asks the webhook about the stamp stored on obj rather than
// for a fresh one: it returns the stamp the hook would leave there, which is
// the stored stamp while that is current. A fresh stamp (Stamper) is always
// of the current format, so it cannot tell that a legacy v1 stamp, which the
// hook keeps until the content changes, is still current.
type StoredVerifier interface {
	VerifyStored(ctx context.Context, obj client.Object) (stamp string, warnings []string, err error)
}

// VerifyStored implements StoredVerifier with a server-side dry-run UPDATE
// of obj that carries workload.VerifyStampAnnotation. The webhook compares
// the stamp the API server holds, never one the request carries. This needs
// the right to update the workload; nothing is stored.
func (s DryRunStamper) VerifyStored(ctx context.Context, obj client.Object) (string, []string, error) {
	ctx, warnings := collectWarnings(ctx)
	cp := obj.DeepCopyObject().(client.Object)
	ann := maps.Clone(cp.GetAnnotations())
	if ann == nil {
		ann = map[string]string{}
	}
	ann[workload.VerifyStampAnnotation] = "true"
	cp.SetAnnotations(ann)
	if err := s.Client.Update(ctx, cp, client.DryRunAll); err != nil {
		return "", confighashWarnings(warnings.list()), fmt.Errorf("dry-run update: %w", err)
	}
	t, ok := orBuiltin(s.Kinds).PodTemplate(cp)
	if !ok {
		return "", nil, fmt.Errorf("%T has no pod template", cp)
	}
	return t.Checksum(), confighashWarnings(warnings.list()), nil
}

// verifyLegacy replaces w's fresh expected stamp by the webhook's verdict on
// the stored one, when the stored one is a legacy v1 stamp.
func verifyLegacy(ctx context.Context, s Stamper, obj client.Object, w *Workload) {
	if hasher.Compare(w.StampedChecksum, w.ExpectedChecksum) != hasher.Legacy {
		return
	}
	v, ok := s.(StoredVerifier)
	if !ok {
		return
	}
	sum, warnings, err := v.VerifyStored(ctx, obj)
	w.Warnings = append(w.Warnings, warnings...)
	switch {
	case apierrors.IsForbidden(err):
		w.ExpectedChecksum = ""
		w.Error = "the stamp has the legacy v1 format; telling whether it is current needs a dry-run update of the workload: " + err.Error()
	case err != nil:
		w.ExpectedChecksum = ""
		w.Error = "asking the webhook about the stored legacy v1 stamp: " + err.Error()
	case sum != "":
		w.ExpectedChecksum = sum
	}
}

// formatReason explains a stamp that is current or cannot be compared
// because of its format or key, or returns "" when neither applies.
func formatReason(w *Workload) (State, string) {
	switch hasher.Compare(w.StampedChecksum, w.ExpectedChecksum) {
	case hasher.Same:
		if _, ok := hasher.StampKeyID(w.StampedChecksum); !ok && w.StampedChecksum != "" {
			return StateCurrent, "the stamp (legacy v1 format) still matches what the sources give now; " +
				"the hook writes a v2 stamp at their next change"
		}
	case hasher.OtherKey:
		stored, _ := hasher.StampKeyID(w.StampedChecksum)
		now, _ := hasher.StampKeyID(w.ExpectedChecksum)
		return StateUnknown, fmt.Sprintf("stamped under HMAC key %s, but confighash now uses key %s (the key Secret was replaced or lost), "+
			"so whether the sources changed since cannot be told; nothing rolls until they change, then the hook re-stamps it", stored, now)
	}
	return "", ""
}
