package webhook

import (
	"crypto/tls"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	ctrlwebhook "sigs.k8s.io/controller-runtime/pkg/webhook"
)

// The server closes connections from an address beyond its bound at once
// (127.0.0.3 here: the started check dials from 127.0.0.1),
// keeps serving the others, and serves HTTP/2 as controller-runtime's does.
func TestServerBoundsConnectionsPerAddress(t *testing.T) {
	const bound = 2
	cert := testCertificate(t)
	m := testMetrics(t)
	srv := NewServer(ctrlwebhook.Options{Host: "127.0.0.1", Port: freePort(t), TLSOpts: []func(*tls.Config){
		func(c *tls.Config) {
			c.GetCertificate = func(*tls.ClientHelloInfo) (*tls.Certificate, error) { return &cert, nil }
		},
	}}, Options{MaxInFlight: DefaultMaxInFlight, MaxConnsPerAddress: bound}, m)
	srv.Register(Path, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) }))
	errc := make(chan error, 1)
	go func() { errc <- srv.Start(t.Context()) }()
	waitStarted(t, srv, errc)
	addr := *srv.addr.Load()

	dial := func(from string) error {
		d := &tls.Dialer{NetDialer: &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}, Timeout: 10 * time.Second},
			Config: &tls.Config{InsecureSkipVerify: true}}
		c, err := d.DialContext(t.Context(), "tcp", addr)
		if err != nil {
			return err
		}
		t.Cleanup(func() { _ = c.Close() })
		return nil
	}
	for i := range bound {
		if err := dial("127.0.0.3"); err != nil {
			t.Fatalf("connection %d within the bound: %v", i, err)
		}
	}
	if err := dial("127.0.0.3"); err == nil {
		t.Errorf("a connection over the bound completed its handshake")
	}
	if got := testutil.ToFloat64(m.Refused.WithLabelValues(refusedConnections)); got != 1 {
		t.Errorf("refused{connections} = %v, want 1", got)
	}
	// Another address is not affected, and is served over HTTP/2.
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
		DialContext:       (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP("127.0.0.2")}}).DialContext,
		TLSClientConfig:   &tls.Config{InsecureSkipVerify: true},
		ForceAttemptHTTP2: true,
	}}
	resp, err := client.Post("https://"+addr+Path, "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatalf("another address: %v", err)
	}
	_ = resp.Body.Close()
	if resp.ProtoMajor != 2 || resp.StatusCode != http.StatusOK {
		t.Errorf("another address: %s %d, want HTTP/2 200", resp.Proto, resp.StatusCode)
	}
}

func testCertificate(t *testing.T) tls.Certificate {
	t.Helper()
	s := httptest.NewUnstartedServer(http.NotFoundHandler())
	s.StartTLS()
	defer s.Close()
	return s.TLS.Certificates[0]
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func waitStarted(t *testing.T, s *Server, errc <-chan error) {
	t.Helper()
	check := s.StartedChecker()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		err := check(nil)
		if err == nil {
			return
		}
		select {
		case err := <-errc:
			t.Fatalf("server stopped: %v", err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("server not started: %v", err)
		}
	}
}
