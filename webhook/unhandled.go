package webhook

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/confighash/confighash/internal/workload"
)

// unhandledMessage is the answer to a request the handler could not act on;
// the handler counts it as answerError although the write is allowed.
const unhandledMessage = "confighash could not handle this request; admitted unchanged"

// unhandledWarning is all the caller learns. It names no source and carries
// no error text: an error from a lookup can say whether a Secret exists, or
// what confighash may read, to someone who may not read it.
var unhandledWarning = workload.Warning("not stamped (internal error); the write is admitted unchanged")

// unhandled admits a readable request the handler could not act on: a
// mutating webhook with failurePolicy Ignore promises that writes always
// pass, and a denial from a broken object or cache would break that promise
// for exactly the writes that fix things. The reason goes to the log only.
func unhandled(ctx context.Context, err error, what string) admission.Response {
	log.FromContext(ctx).Error(err, what+"; admitting unchanged")
	return admission.Allowed(unhandledMessage).WithWarnings(unhandledWarning)
}
