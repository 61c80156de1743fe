package app

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// testCert is a certificate and its key; ca signs it when set, else it is
// self-signed (a CA).
func testCert(t *testing.T, cn string, ca *tls.Certificate, usage x509.ExtKeyUsage) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      pkix.Name{CommonName: cn},
		NotBefore:    time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{usage},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
	}
	parent, signer := tmpl, any(key)
	if ca == nil {
		tmpl.IsCA, tmpl.BasicConstraintsValid = true, true
		tmpl.KeyUsage |= x509.KeyUsageCertSign
		tmpl.ExtKeyUsage = nil
	} else {
		parent, signer = ca.Leaf, ca.PrivateKey
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, key.Public(), signer)
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}
}

func writePEM(t *testing.T, c tls.Certificate) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "ca.crt")
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Certificate[0]}), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestClientAuthTLS: with --webhook-client-ca-file the webhook server asks
// for a client certificate, verifies one that is given against the bundle
// (another CA's fails the handshake), and still completes a handshake with
// a caller that sends none (the liveness check, a probe), whose request
// then carries no verified chain.
func TestClientAuthTLS(t *testing.T) {
	ca := testCert(t, "webhook-client-ca", nil, 0)
	other := testCert(t, "another-ca", nil, 0)
	serving := testCert(t, "127.0.0.1", &ca, x509.ExtKeyUsageServerAuth)
	auth, err := loadClientAuth(Options{WebhookClientCAFile: writePEM(t, ca)})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if len(r.TLS.VerifiedChains) > 0 {
			_, _ = w.Write([]byte("verified " + r.TLS.VerifiedChains[0][0].Subject.CommonName))
			return
		}
		_, _ = w.Write([]byte("anonymous"))
	}))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{serving}}
	for _, opt := range auth.tlsOpts() {
		opt(srv.TLS)
	}
	srv.StartTLS()
	defer srv.Close()
	roots := x509.NewCertPool()
	roots.AddCert(ca.Leaf)

	tests := map[string]struct {
		cert    *tls.Certificate
		want    string // body, or an error substring
		wantErr bool
	}{
		"no certificate":                  {want: "anonymous"},
		"a certificate of the CA":         {cert: ptr(testCert(t, "kube-apiserver-webhook-client", &ca, x509.ExtKeyUsageClientAuth)), want: "verified kube-apiserver-webhook-client"},
		"a certificate of another CA":     {cert: ptr(testCert(t, "intruder", &other, x509.ExtKeyUsageClientAuth)), wantErr: true},
		"a serving certificate of the CA": {cert: ptr(testCert(t, "server", &ca, x509.ExtKeyUsageServerAuth)), wantErr: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			cfg := &tls.Config{RootCAs: roots}
			if tc.cert != nil {
				// Sent whatever CAs the server names, as a hostile
				// caller would.
				cfg.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return tc.cert, nil }
			}
			hc := &http.Client{Transport: &http.Transport{TLSClientConfig: cfg}}
			resp, err := hc.Get(srv.URL)
			if tc.wantErr {
				if err == nil {
					resp.Body.Close()
					t.Fatal("the request went through, want a failed handshake")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var b strings.Builder
			if _, err := io.Copy(&b, resp.Body); err != nil {
				t.Fatal(err)
			}
			if b.String() != tc.want {
				t.Errorf("answer %q, want %q", b.String(), tc.want)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

func TestClientAuthFlags(t *testing.T) {
	ca := writePEM(t, testCert(t, "ca", nil, 0))
	notPEM := filepath.Join(t.TempDir(), "empty")
	if err := os.WriteFile(notPEM, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := map[string]struct {
		args      []string
		wantErr   string // from validate or loadClientAuth
		wantNames []string
		wantAuth  bool
	}{
		"off by default":     {},
		"a CA bundle":        {args: []string{"--webhook-client-ca-file=" + ca}, wantAuth: true},
		"a CA and names":     {args: []string{"--webhook-client-ca-file=" + ca, "--webhook-client-names=a,b"}, wantAuth: true, wantNames: []string{"a", "b"}},
		"names without a CA": {args: []string{"--webhook-client-names=a"}, wantErr: "--webhook-client-names needs --webhook-client-ca-file"},
		"a missing file":     {args: []string{"--webhook-client-ca-file=/nonexistent"}, wantErr: "--webhook-client-ca-file: open /nonexistent"},
		"not PEM":            {args: []string{"--webhook-client-ca-file=" + notPEM}, wantErr: "no PEM certificate"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			o := parsedServe(t, tc.args...)
			_, err := o.validate()
			var auth *clientAuth
			if err == nil {
				auth, err = loadClientAuth(o)
			}
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if (auth != nil) != tc.wantAuth || (auth.webhookCallers() != nil) != tc.wantAuth {
				t.Fatalf("client auth = %+v, want it on: %v", auth, tc.wantAuth)
			}
			if tc.wantAuth && strings.Join(auth.webhookCallers().Names, ",") != strings.Join(tc.wantNames, ",") {
				t.Errorf("names = %q, want %q", auth.webhookCallers().Names, tc.wantNames)
			}
		})
	}
}
