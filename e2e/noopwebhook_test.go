//go:build e2e

package e2e

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/confighash/confighash/internal/injection"
	"github.com/confighash/confighash/internal/workload"
	"github.com/confighash/confighash/webhook"
)

// noopWebhookName is the do-nothing webhook's name in the apiserver's
// metrics.
const noopWebhookName = "noop.bench.confighash.dev"

// noopNamespaceLabel selects the namespaces the do-nothing webhook serves;
// confighash's own selector (the injection label) never matches them.
const noopNamespaceLabel = "bench.confighash.dev/noop"

// serveNoopWebhook serves, from this process on this machine, an admission
// webhook that decodes the review and answers "allowed" with nothing else:
// the floor of what any webhook costs the apiserver (TLS, the round trip,
// JSON both ways). It registers it for confighash's rules and match
// conditions, in namespaces labelled noopNamespaceLabel, and removes it
// when the test ends.
func serveNoopWebhook(t *testing.T) {
	t.Helper()
	certPEM, cert := selfSignedLoopback(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{
		Handler:           http.HandlerFunc(answerAllowed),
		TLSConfig:         &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12},
		ReadHeaderTimeout: 5 * time.Second,
	}
	go func() { _ = srv.ServeTLS(ln, "", "") }()
	t.Cleanup(func() { _ = srv.Close() })

	url := fmt.Sprintf("https://%s/noop", ln.Addr())
	cfg := webhook.Configuration("confighash-bench-noop", injection.New("confighash-system"), workload.Kinds(), admissionregistrationv1.WebhookClientConfig{URL: &url, CABundle: certPEM})
	w := &cfg.Webhooks[0]
	w.Name = noopWebhookName
	w.NamespaceSelector = &metav1.LabelSelector{MatchLabels: map[string]string{noopNamespaceLabel: "true"}}
	w.ReinvocationPolicy = ptr.To(admissionregistrationv1.NeverReinvocationPolicy)
	cfg.TypeMeta = metav1.TypeMeta{}
	env.Create(t, cfg)
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), cfg) })
	// The apiserver picks up a new configuration within a second or so.
	time.Sleep(2 * time.Second)
}

func answerAllowed(w http.ResponseWriter, r *http.Request) {
	var review admissionv1.AdmissionReview
	if err := json.NewDecoder(r.Body).Decode(&review); err != nil || review.Request == nil {
		http.Error(w, "bad review", http.StatusBadRequest)
		return
	}
	review.Response = &admissionv1.AdmissionResponse{UID: review.Request.UID, Allowed: true}
	review.Request = nil
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(&review)
}

// selfSignedLoopback is a certificate for 127.0.0.1, which is its own CA.
func selfSignedLoopback(t *testing.T) ([]byte, tls.Certificate) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "noop webhook"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IPAddresses:           []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	pair, err := tls.X509KeyPair(certPEM, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}))
	if err != nil {
		t.Fatal(err)
	}
	return certPEM, pair
}
