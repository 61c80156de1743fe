package app

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/confighash/confighash/webhook"
)

// livenessTimeout bounds one liveness check. It is below the probes'
// timeoutSeconds (5) so the check fails with a reason rather than the
// kubelet timing out on it.
const livenessTimeout = 3 * time.Second

// addLiveness makes /healthz complete a TLS handshake with this replica's
// own webhook server (see servesTLS).
func addLiveness(mgr manager.Manager) error {
	srv, ok := mgr.GetWebhookServer().(*webhook.Server)
	if !ok {
		return fmt.Errorf("liveness check: unexpected webhook server %T", mgr.GetWebhookServer())
	}
	addr := net.JoinHostPort(srv.Options.Host, strconv.Itoa(srv.Options.Port))
	if err := mgr.AddHealthzCheck("webhook-tls", servesTLS(addr, livenessTimeout)); err != nil {
		return fmt.Errorf("adding liveness check: %w", err)
	}
	return nil
}

// servesTLS is a liveness check: it completes a TLS handshake with the
// webhook server at addr and requires a certificate in the answer.
//
// It fails when the thing every replica exists for is broken in a way only
// a restart mends: the listener is gone or its accept loop is wedged (the
// handshake times out), or the server has no certificate it can serve (the
// certificate watcher's GetCertificate fails, so the handshake does). A
// plain ping would pass through all of that.
//
// It never calls the API server, on purpose: with the apiserver briefly
// down the webhook server keeps serving the certificate it has, this check
// keeps passing, and no replica restarts. A restart would not bring the
// apiserver back, and every restarted replica would have to read its key
// and certificate from that same apiserver before it could serve again: a
// restart storm. For the same reason it ignores the certificate's expiry,
// which readiness reports (certs.Manager.Ready): renewing needs the
// apiserver too. Nor does it check goroutines that wait on the apiserver
// (the certificate loop, the hook's workers): they are slow exactly when it
// is, and would turn an apiserver outage into restarts.
func servesTLS(addr string, timeout time.Duration) healthz.Checker {
	return func(r *http.Request) error {
		ctx := context.Background()
		if r != nil {
			ctx = r.Context()
		}
		ctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		d := &tls.Dialer{Config: &tls.Config{
			// Whether the apiserver trusts the certificate is not this
			// replica's liveness; that it can serve one is.
			InsecureSkipVerify: true, //nolint:gosec // no data is exchanged
		}}
		conn, err := d.DialContext(ctx, "tcp", addr)
		if err != nil {
			return fmt.Errorf("webhook server at %s does not complete a TLS handshake: %w", addr, err)
		}
		defer conn.Close()
		if len(conn.(*tls.Conn).ConnectionState().PeerCertificates) == 0 {
			return errors.New("webhook server at " + addr + " presented no certificate")
		}
		return nil
	}
}
