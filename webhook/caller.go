package webhook

import (
	"context"
	"crypto/tls"
	"net/http"
	"slices"

	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/confighash/confighash/internal/workload"
)

// Callers says which callers of the webhook are the apiserver: those that
// presented a TLS client certificate the server verified against its client
// CAs (see cmd/confighash's --webhook-client-ca-file), whose leaf, when
// Names is not empty, carries one of Names as its common name or a DNS name.
//
// When a Handler has Callers, every other caller gets the same answer,
// whatever it sends: allowed, no patch, and unauthenticatedWarning. Anyone
// who reaches the port can POST a review naming any served namespace, and
// nearly every answer depends on that namespace's config: the `required
// sources missing` warning names a Secret that does not exist, whether an
// UPDATE keeps its old stamp tells the same, and a fresh stamp tells whether
// two templates read equal content. Only the apiserver, which has checked
// that its user may write the workload, gets those answers.
//
// Requiring the certificate at the TLS layer instead would fail the
// handshake of the liveness check and of anyone probing the port, and an
// apiserver that does not present the certificate would see only a TLS
// error; this way the handshake succeeds, and every write it admits
// unstamped carries a warning that says why.
type Callers struct {
	// Names, when not empty, are the common names or DNS names accepted in
	// the caller's certificate; a CA that also signs other clients' (a
	// cluster's client CA) then admits only the apiserver's.
	Names []string
}

// unauthenticatedMessage and unauthenticatedWarning answer a caller that
// Callers does not accept. They name nothing from the request.
const unauthenticatedMessage = "the caller is not authenticated as the apiserver; admitted unchanged"

var unauthenticatedWarning = workload.Warning("not stamped: the caller presented no client certificate that confighash accepts " +
	"(--webhook-client-ca-file); the write is admitted unchanged")

type callerKey struct{}

// Endpoint serves h within l, as the package's Endpoint does, and lets the
// handler tell whether the request came from an accepted caller. With c nil
// it is Endpoint(h, l): every caller is answered.
//
// Callers c does not accept are served by a second endpoint with limits of
// their own (forOthers): one body at the limit and one slot. They always get
// the one fixed answer, and however many of them trickle or flood, they
// never take the budget or the slots the apiserver's calls need.
func (c *Callers) Endpoint(h admission.Handler, l Limits) http.Handler {
	if c == nil {
		return Endpoint(h, l)
	}
	accepted, others := Endpoint(h, l), Endpoint(h, l.forOthers())
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !c.accepts(r.TLS) {
			others.ServeHTTP(w, r)
			return
		}
		accepted.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), callerKey{}, true)))
	})
}

// accepts reports whether cs carries a verified client certificate chain
// whose leaf has one of c.Names (any, when Names is empty). The TLS server
// verifies the chain, for client authentication, against its client CAs;
// without one, VerifiedChains is empty.
func (c *Callers) accepts(cs *tls.ConnectionState) bool {
	if cs == nil || len(cs.VerifiedChains) == 0 || len(cs.VerifiedChains[0]) == 0 {
		return false
	}
	if len(c.Names) == 0 {
		return true
	}
	leaf := cs.VerifiedChains[0][0]
	return slices.Contains(c.Names, leaf.Subject.CommonName) ||
		slices.ContainsFunc(leaf.DNSNames, func(n string) bool { return slices.Contains(c.Names, n) })
}

// rejects reports whether h answers only accepted callers and the request
// in ctx did not come from one.
func (h *Handler) rejects(ctx context.Context) bool {
	return h.Callers.rejects(ctx)
}

// rejects reports whether c, when set, did not accept the request's caller.
func (c *Callers) rejects(ctx context.Context) bool {
	if c == nil {
		return false
	}
	ok, _ := ctx.Value(callerKey{}).(bool)
	return !ok
}

// unauthenticated is the one answer to a caller h rejects.
func unauthenticated() (admission.Response, outcome) {
	return admission.Allowed(unauthenticatedMessage).WithWarnings(unauthenticatedWarning), answerUnauthenticated
}
