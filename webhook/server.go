package webhook

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/certwatcher"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log"
	ctrlwebhook "sigs.k8s.io/controller-runtime/pkg/webhook"
)

// maxStreamsPerConn bounds the HTTP/2 requests open at once on one
// connection (Go's default is 250), so that the per-address connection
// bound also bounds the requests, and goroutines, of one address.
const maxStreamsPerConn = 64

// HTTP/2 flow-control windows: what a caller may send ahead of the handler
// reading it. Go's defaults (1 MiB a connection) would let each of the
// per-address connections park a body's worth outside the body budget
// while its handler waits for room; with these, one address's
// connections hold at most MaxConnsPerAddress x 256 KiB (8 MiB at the
// default) before the budget sees a byte.
const (
	maxReceivePerConn   = 256 << 10
	maxReceivePerStream = 64 << 10
)

// Server is controller-runtime's webhook server with one change: its
// listener bounds the connections per source address. controller-runtime's
// DefaultServer builds its listener and http.Server inside Start and takes
// neither a listener nor a ConnState hook, so Start is done again here the
// way it does it (TLS options, certificate watcher, client CA, graceful
// stop); registration, and the request metrics it adds, are its own.
type Server struct {
	*ctrlwebhook.DefaultServer
	// maxConnsPerAddress is the bound (Options.MaxConnsPerAddress).
	maxConnsPerAddress int
	// metrics, when set, counts the connections closed at once.
	metrics *Metrics

	started atomic.Bool
	addr    atomic.Pointer[string]
}

// NewServer returns a Server for controller-runtime's server options so,
// bounded by o, which Options.Validate accepted; m, when set, counts the
// connections closed at once.
func NewServer(so ctrlwebhook.Options, o Options, m *Metrics) *Server {
	return &Server{
		DefaultServer:      ctrlwebhook.NewServer(so).(*ctrlwebhook.DefaultServer),
		maxConnsPerAddress: o.MaxConnsPerAddress,
		metrics:            m,
	}
}

// options are the server's options with controller-runtime's defaults.
func (s *Server) options() ctrlwebhook.Options {
	o := s.Options
	if o.Port == 0 {
		o.Port = ctrlwebhook.DefaultPort
	}
	if o.CertDir == "" {
		o.CertDir = filepath.Join(os.TempDir(), "k8s-webhook-server", "serving-certs")
	}
	if o.CertName == "" {
		o.CertName = "tls.crt"
	}
	if o.KeyName == "" {
		o.KeyName = "tls.key"
	}
	return o
}

// Start serves until ctx ends.
func (s *Server) Start(ctx context.Context) error {
	o := s.options()
	if o.Port < 0 {
		return nil
	}
	mux := s.WebhookMux()
	if mux == nil {
		return errors.New("webhook server: nothing registered")
	}
	cfg := &tls.Config{NextProtos: []string{"h2"}}
	for _, op := range o.TLSOpts {
		op(cfg)
	}
	if cfg.GetCertificate == nil {
		w, err := certwatcher.New(filepath.Join(o.CertDir, o.CertName), filepath.Join(o.CertDir, o.KeyName))
		if err != nil {
			return fmt.Errorf("webhook server: watching its certificate: %w", err)
		}
		cfg.GetCertificate = w.GetCertificate
		go func() {
			if err := w.Start(ctx); err != nil {
				log.FromContext(ctx).Error(err, "certificate watcher")
			}
		}()
	}
	if o.ClientCAName != "" {
		pem, err := os.ReadFile(filepath.Join(o.CertDir, o.ClientCAName))
		if err != nil {
			return fmt.Errorf("webhook server: reading client CA: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return errors.New("webhook server: no certificate in the client CA file")
		}
		cfg.ClientCAs, cfg.ClientAuth = pool, tls.RequireAndVerifyClientCert
	}
	tcp, err := net.Listen("tcp", net.JoinHostPort(o.Host, strconv.Itoa(o.Port)))
	if err != nil {
		return fmt.Errorf("webhook server: %w", err)
	}
	bound := tcp.Addr().String()
	s.addr.Store(&bound)
	l := tls.NewListener(LimitPerAddress(tcp, s.maxConnsPerAddress, func() { s.metrics.refused(refusedConnections) }), cfg)
	srv := &http.Server{
		BaseContext:       func(net.Listener) context.Context { return ctx },
		Handler:           mux,
		MaxHeaderBytes:    1 << 20,
		IdleTimeout:       90 * time.Second,
		ReadHeaderTimeout: 32 * time.Second,
		HTTP2: &http.HTTP2Config{MaxConcurrentStreams: maxStreamsPerConn,
			MaxReceiveBufferPerConnection: maxReceivePerConn, MaxReceiveBufferPerStream: maxReceivePerStream},
	}
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		<-ctx.Done()
		// Not ctx: it has ended, and in-flight answers deserve their minute.
		stop, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer cancel()
		if err := srv.Shutdown(stop); err != nil {
			log.FromContext(ctx).Error(err, "stopping the webhook server")
		}
	}()
	log.FromContext(ctx).Info("serving webhook server", "address", bound, "maxConnsPerAddress", s.maxConnsPerAddress)
	s.started.Store(true)
	if err := srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("webhook server: %w", err)
	}
	<-stopped
	return nil
}

// StartedChecker is healthy once the server accepts TLS connections.
func (s *Server) StartedChecker() healthz.Checker {
	return func(*http.Request) error {
		if s.options().Port < 0 {
			return nil
		}
		addr := s.addr.Load()
		if !s.started.Load() || addr == nil {
			return errors.New("webhook server has not been started yet")
		}
		d := &net.Dialer{Timeout: 10 * time.Second}
		conn, err := tls.DialWithDialer(d, "tcp", *addr, &tls.Config{InsecureSkipVerify: true}) //nolint:gosec // only checks that TLS is served
		if err != nil {
			return fmt.Errorf("webhook server is not reachable: %w", err)
		}
		return conn.Close()
	}
}
