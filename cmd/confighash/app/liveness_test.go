package app

import (
	"crypto/tls"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestServesTLS runs the liveness check against webhook servers in the
// states a restart mends, and against a healthy one.
func TestServesTLS(t *testing.T) {
	tests := map[string]struct {
		serve   func(t *testing.T) string // starts a server, returns its address
		wantErr string                    // substring; "" means healthy
	}{
		"serving a certificate": {
			serve: func(t *testing.T) string {
				s := httptest.NewTLSServer(http.NotFoundHandler())
				t.Cleanup(s.Close)
				return s.Listener.Addr().String()
			},
		},
		"listener never accepts (wedged accept loop)": {
			serve: func(t *testing.T) string {
				l := listen(t)
				return l.Addr().String()
			},
			wantErr: "does not complete a TLS handshake",
		},
		"accepts but never answers": {
			serve: func(t *testing.T) string {
				l := listen(t)
				go func() {
					for {
						c, err := l.Accept()
						if err != nil {
							return
						}
						t.Cleanup(func() { c.Close() })
					}
				}()
				return l.Addr().String()
			},
			wantErr: "does not complete a TLS handshake",
		},
		"no certificate to serve": {
			serve: func(t *testing.T) string {
				// What the webhook server does when its certwatcher has
				// nothing to hand out.
				l := tls.NewListener(listen(t), &tls.Config{GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) {
					return nil, errors.New("certwatcher: no certificate loaded")
				}})
				go func() { _ = http.Serve(l, http.NotFoundHandler()) }()
				return l.Addr().String()
			},
			wantErr: "does not complete a TLS handshake",
		},
		"nothing listening": {
			serve: func(t *testing.T) string {
				l := listen(t)
				addr := l.Addr().String()
				l.Close()
				return addr
			},
			wantErr: "connection refused",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			check := servesTLS(tc.serve(t), 300*time.Millisecond)
			start := time.Now()
			err := check(httptest.NewRequest(http.MethodGet, "/healthz", nil))
			if took := time.Since(start); took > 2*time.Second {
				t.Errorf("the check took %s; it must stay within its timeout", took)
			}
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("healthy server failed the check: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("check = %v, want an error containing %q", err, tc.wantErr)
			}
		})
	}
}

func listen(t *testing.T) net.Listener {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}
