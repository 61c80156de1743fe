package webhook

import (
	"net/http"

	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

// Endpoint is the HTTP handler served at Path, in stages: the limits first
// (limits.go), so that nothing is read before they allow it, then the
// review's decoding, h, and the one rewrite of its answer (review.go).
func Endpoint(h admission.Handler, l Limits) http.Handler {
	return endpoint(&admission.Webhook{Handler: h}, l)
}

// endpoint lets the fuzz test serve a webhook that does not recover panics,
// so that one fails the test instead of becoming an answer.
func endpoint(wh *admission.Webhook, l Limits) http.Handler {
	return l.Wrap(newReviews(wh))
}
