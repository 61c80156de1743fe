package webhook

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/log"
)

// notServedMessage is the whole answer for a namespace confighash does not
// serve. It is the same for every such namespace, and the handler gives it
// before it decodes the object or looks up a source: anyone who can reach
// the webhook's port can POST an AdmissionReview naming any namespace, and
// must learn neither a stamp over that namespace's Secrets nor whether a
// Secret exists there, nor why the namespace is not served.
const notServedMessage = "confighash does not act in this namespace"

// serves applies the injection policy to the request's namespace, read
// through h.Namespaces. A namespace that cannot be read is not served: the
// write is admitted unchanged, which failurePolicy Ignore allows anyway, and
// the reason goes to the log only.
func (h *Handler) serves(ctx context.Context, ns string) bool {
	if h.Namespaces == nil {
		// Fail closed: a handler that cannot read namespaces serves none.
		return false
	}
	d, err := h.Policy.Check(ctx, h.Namespaces, ns)
	if err != nil {
		log.FromContext(ctx).Error(err, "applying the namespace policy; admitting unchanged", "namespace", ns)
	}
	return d.Serves
}
