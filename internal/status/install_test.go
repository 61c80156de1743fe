package status

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"log"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/confighash/confighash/internal/contract"
	"github.com/confighash/confighash/internal/injection"
	"github.com/confighash/confighash/internal/status/statustest"
	"github.com/confighash/confighash/internal/workload"
	"github.com/confighash/confighash/webhook"
)

func selfSignedPEM(t *testing.T, notBefore, notAfter time.Time) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test-ca"},
		NotBefore: notBefore, NotAfter: notAfter, IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

func TestParseCABundle(t *testing.T) {
	now := time.Now()
	valid := selfSignedPEM(t, now.Add(-time.Hour), now.Add(time.Hour))
	expired := selfSignedPEM(t, now.Add(-2*time.Hour), now.Add(-time.Hour))
	tests := map[string]struct {
		bundle  []byte
		want    int
		wantErr string
	}{
		"one":               {bundle: valid, want: 1},
		"two":               {bundle: append(append([]byte{}, valid...), valid...), want: 2},
		"surrounding space": {bundle: []byte("\n" + string(valid) + "\n\n"), want: 1},
		"empty":             {bundle: nil, wantErr: "empty"},
		"not PEM":           {bundle: []byte("not a certificate"), wantErr: "no PEM certificate"},
		"a key":             {bundle: pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: []byte{1}}), wantErr: "PRIVATE KEY"},
		"bad DER":           {bundle: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: []byte{1, 2}}), wantErr: "certificate 1"},
		"trailing junk":     {bundle: append(append([]byte{}, valid...), "junk"...), wantErr: "trailing"},
		"expired":           {bundle: expired, wantErr: "expired"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			certs, err := parseCABundle(tc.bundle, now)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || len(certs) != tc.want {
				t.Fatalf("got %d certs, %v; want %d", len(certs), err, tc.want)
			}
		})
	}
}

func TestSelectorString(t *testing.T) {
	a := &metav1.LabelSelector{
		MatchLabels: map[string]string{"x": "1"},
		MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: "n", Operator: metav1.LabelSelectorOpNotIn, Values: []string{"b", "a"}},
			{Key: "m", Operator: metav1.LabelSelectorOpExists},
		},
	}
	b := &metav1.LabelSelector{
		MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: "m", Operator: metav1.LabelSelectorOpExists},
			{Key: "n", Operator: metav1.LabelSelectorOpNotIn, Values: []string{"a", "b"}},
			{Key: "x", Operator: metav1.LabelSelectorOpIn, Values: []string{"1"}},
		},
	}
	if selectorString(a) != selectorString(b) {
		t.Errorf("equal selectors differ: %q vs %q", selectorString(a), selectorString(b))
	}
	if selectorString(nil) != selectorString(&metav1.LabelSelector{}) {
		t.Error("nil and empty selectors differ; the API defaults one to the other")
	}
}

// installed returns the webhook configuration confighash would register,
// with the given client config and CA bundle.
func installed(cc admissionregistrationv1.WebhookClientConfig, caBundle []byte) *admissionregistrationv1.MutatingWebhookConfiguration {
	cc.CABundle = caBundle
	return webhook.Configuration("confighash", injection.New("confighash-system"), workload.Kinds(), cc)
}

func TestCheckInstallURL(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.NotFoundHandler())
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the failing cases' handshakes
	srv.StartTLS()
	t.Cleanup(srv.Close)
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	url := srv.URL + webhook.Path
	opts := InstallOptions{WebhookConfigName: "confighash", ConfighashNamespace: "confighash-system", DialTimeout: 2 * time.Second}

	tests := map[string]struct {
		mutate   func(*admissionregistrationv1.MutatingWebhookConfiguration)
		failing  []string
		inDetail string
	}{
		"as confighash registers it": {inDetail: "verified against the caBundle"},
		"another CA": {
			mutate: func(c *admissionregistrationv1.MutatingWebhookConfiguration) {
				c.Webhooks[0].ClientConfig.CABundle = selfSignedPEM(t, time.Now().Add(-time.Hour), time.Now().Add(time.Hour))
			},
			failing: []string{CheckReachable}, inDetail: "certificate",
		},
		"failurePolicy Fail": {
			mutate: func(c *admissionregistrationv1.MutatingWebhookConfiguration) {
				c.Webhooks[0].FailurePolicy = ptr.To(admissionregistrationv1.Fail)
			},
			failing: []string{CheckFailurePolicy}, inDetail: "want Ignore",
		},
		"selector without the exclusions": {
			mutate: func(c *admissionregistrationv1.MutatingWebhookConfiguration) {
				c.Webhooks[0].NamespaceSelector = &metav1.LabelSelector{MatchLabels: map[string]string{contract.InjectionLabel: contract.InjectionEnabled}}
			},
			failing: []string{CheckNamespaceSelector}, inDetail: "kube-system",
		},
		"nobody listening": {
			mutate: func(c *admissionregistrationv1.MutatingWebhookConfiguration) {
				c.Webhooks[0].ClientConfig.URL = ptr.To("https://127.0.0.1:1/mutate")
			},
			failing: []string{CheckReachable},
		},
		"no caBundle": {
			mutate: func(c *admissionregistrationv1.MutatingWebhookConfiguration) {
				c.Webhooks[0].ClientConfig.CABundle = nil
			},
			failing: []string{CheckCABundle, CheckReachable}, inDetail: "empty",
		},
		"renamed webhook": {
			mutate: func(c *admissionregistrationv1.MutatingWebhookConfiguration) {
				c.Webhooks[0].Name = "other.example.com"
			},
			failing: []string{CheckWebhookConfiguration}, inDetail: "no webhook named",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			cfg := installed(admissionregistrationv1.WebhookClientConfig{URL: &url}, ca)
			if tc.mutate != nil {
				tc.mutate(cfg)
			}
			r := CheckInstall(t.Context(), statustest.NewClient(t, cfg), opts)
			expectChecks(t, r, tc.failing, tc.inDetail)
		})
	}

	t.Run("no configuration", func(t *testing.T) {
		r := CheckInstall(t.Context(), statustest.NewClient(t), opts)
		expectChecks(t, r, []string{CheckWebhookConfiguration}, "not found")
	})
}

func TestCheckInstallService(t *testing.T) {
	opts := InstallOptions{WebhookConfigName: "confighash", ConfighashNamespace: "confighash-system"}
	ca := selfSignedPEM(t, time.Now().Add(-time.Hour), time.Now().Add(time.Hour))
	cc := admissionregistrationv1.WebhookClientConfig{Service: &admissionregistrationv1.ServiceReference{
		Namespace: "confighash-system", Name: "confighash-webhook", Path: ptr.To(webhook.Path)}}
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "confighash-system", Name: "confighash-webhook"},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 443}}}}
	slice := func(ready bool) *discoveryv1.EndpointSlice {
		return &discoveryv1.EndpointSlice{
			ObjectMeta:  metav1.ObjectMeta{Namespace: "confighash-system", Name: "confighash-webhook-abc", Labels: map[string]string{discoveryv1.LabelServiceName: "confighash-webhook"}},
			AddressType: discoveryv1.AddressTypeIPv4,
			Endpoints: []discoveryv1.Endpoint{
				{Addresses: []string{"10.0.0.1"}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(ready)}},
				{Addresses: []string{"10.0.0.2"}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(false)}},
			},
		}
	}
	tests := map[string]struct {
		objs     []client.Object
		failing  []string
		inDetail string
	}{
		"ready":              {objs: []client.Object{svc, slice(true)}, inDetail: "1 ready endpoint(s); TLS through a Service cannot be verified"},
		"no ready endpoints": {objs: []client.Object{svc, slice(false)}, failing: []string{CheckReachable}, inDetail: "no ready endpoints"},
		"no service":         {failing: []string{CheckReachable}, inDetail: "not found"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			objs := append([]client.Object{installed(cc, ca)}, tc.objs...)
			r := CheckInstall(t.Context(), statustest.NewClient(t, objs...), opts)
			expectChecks(t, r, tc.failing, tc.inDetail)
		})
	}
}

// expectChecks asserts exactly the named checks failed, and that some
// check's detail (a failing one's, if any) mentions inDetail.
func expectChecks(t *testing.T, r *InstallReport, failing []string, inDetail string) {
	t.Helper()
	var failed []string
	mentioned := false
	for _, c := range r.Checks {
		if !c.OK {
			failed = append(failed, c.Name)
		}
		if (len(failing) == 0 || !c.OK) && strings.Contains(c.Detail, inDetail) {
			mentioned = true
		}
	}
	if strings.Join(failed, ",") != strings.Join(failing, ",") {
		t.Errorf("failed checks = %v, want %v; report: %+v", failed, failing, r.Checks)
	}
	if r.OK != (len(failing) == 0) {
		t.Errorf("OK = %v with failed checks %v", r.OK, failed)
	}
	if !mentioned {
		t.Errorf("no check detail mentions %q: %+v", inDetail, r.Checks)
	}
	if len(failing) == 0 && len(r.Checks) != 5 {
		t.Errorf("want 5 checks, got %+v", r.Checks)
	}
}
