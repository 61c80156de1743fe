package app

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/confighash/confighash/internal/hashkey"
)

// keyReadBackoff bounds the retries of the HMAC key read at start: about
// 30 s in all (0.5+1+2+4+8+10 s, jittered). A longer outage is the kubelet's
// to wait out: the container exits, restarts with its own backoff, and the
// startupProbe leaves room for this one.
func keyReadBackoff() wait.Backoff {
	return wait.Backoff{Duration: 500 * time.Millisecond, Factor: 2, Jitter: 0.1, Steps: 7, Cap: 10 * time.Second}
}

// readHMACKey is hashkey.Ensure with retries on transient errors. The first
// request of a starting pod is the one most likely to meet an apiserver
// that is restarting, overloaded or not yet reachable through a fresh pod
// network; failing the whole process on it costs a CrashLoopBackOff.
//
// Only errors that a retry can cure are retried. What hashkey decides
// (whether and how to create a missing key, a key that is too short) and
// what the apiserver refuses (forbidden, invalid) is returned at once:
// retrying would only delay the same answer. The retry lives here, around
// the call, so hashkey keeps one attempt per call and its own semantics.
func readHMACKey(ctx context.Context, c client.Client, ref types.NamespacedName, b wait.Backoff) ([]byte, error) {
	logger := log.FromContext(ctx)
	var key []byte
	var last error
	attempt := 0
	err := wait.ExponentialBackoffWithContext(ctx, b, func(ctx context.Context) (bool, error) {
		attempt++
		k, err := hashkey.Ensure(ctx, c, ref)
		switch {
		case err == nil:
			key = k
			return true, nil
		case !transient(err):
			return false, err
		}
		last = err
		logger.Info("reading the HMAC key failed; retrying", "attempt", attempt, "error", err.Error())
		return false, nil
	})
	switch {
	case err == nil:
		return key, nil
	case last != nil && wait.Interrupted(err):
		// Out of steps, or ctx ended: the last API error says why.
		return nil, fmt.Errorf("reading the HMAC key: gave up after %d attempts: %w", attempt, errors.Join(last, ctx.Err()))
	}
	return nil, err
}

// transient reports whether err is one a retry can cure: the apiserver is
// overloaded, timing out or briefly failing, or the connection to it failed.
func transient(err error) bool {
	var netErr net.Error
	switch {
	case apierrors.IsServerTimeout(err), apierrors.IsTimeout(err), apierrors.IsTooManyRequests(err),
		apierrors.IsServiceUnavailable(err), apierrors.IsInternalError(err), apierrors.IsUnexpectedServerError(err):
		return true
	case utilnet.IsConnectionRefused(err), utilnet.IsConnectionReset(err), utilnet.IsProbableEOF(err), utilnet.IsHTTP2ConnectionLost(err):
		return true
	case errors.As(err, &netErr):
		return true
	}
	return false
}
