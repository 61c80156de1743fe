package webhook

import (
	"net/http"

	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

// Endpoint is the HTTP handler served at Path: the limits first, so that
// nothing is read before they allow it, then HTTP status codes for requests
// that could not be read, then the guarantee that a readable request is
// never denied, then controller-runtime's review decoding and h.
func Endpoint(h admission.Handler, l Limits) http.Handler {
	return endpoint(&admission.Webhook{Handler: h}, l)
}

// endpoint lets the fuzz test serve a webhook that does not recover panics,
// so that one fails the test instead of becoming an answer.
func endpoint(wh *admission.Webhook, l Limits) http.Handler {
	return l.Wrap(WithStatusCodes(admitReadable(wh)))
}
