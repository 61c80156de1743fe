package certs

import (
	"bytes"
	"context"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

// These tests use controller-runtime's fake client; behaviour against a real
// apiserver (conflicts, patch semantics) is covered by the e2e suite.

const testWebhookConfig = "confighash"

var testSecretKey = types.NamespacedName{Namespace: "confighash-system", Name: "confighash-webhook-certs"}

func testWebhookConfiguration() *admissionregistrationv1.MutatingWebhookConfiguration {
	url := "https://127.0.0.1:9443/mutate"
	return &admissionregistrationv1.MutatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: testWebhookConfig},
		Webhooks: []admissionregistrationv1.MutatingWebhook{
			{Name: "deployments.confighash.io", ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: &url}},
			{Name: "statefulsets.confighash.io", ClientConfig: admissionregistrationv1.WebhookClientConfig{
				Service: &admissionregistrationv1.ServiceReference{Namespace: "confighash-system", Name: "confighash-webhook"},
			}},
		},
	}
}

func newTestManager(t *testing.T, c client.Client, now time.Time) (*Manager, string) {
	t.Helper()
	dir := t.TempDir()
	m := New(c, Options{
		SecretKey:         testSecretKey,
		WebhookConfigName: testWebhookConfig,
		DNSNames:          []string{"confighash-webhook.confighash-system.svc"},
		IPAddresses:       []net.IP{net.ParseIP("127.0.0.1")},
		CertDir:           dir,
	})
	m.now = func() time.Time { return now }
	return m, dir
}

func getSecret(ctx context.Context, t *testing.T, c client.Client) *corev1.Secret {
	t.Helper()
	s := &corev1.Secret{}
	if err := c.Get(ctx, testSecretKey, s); err != nil {
		t.Fatalf("getting secret: %v", err)
	}
	return s
}

func getWebhookConfig(ctx context.Context, t *testing.T, c client.Client) *admissionregistrationv1.MutatingWebhookConfiguration {
	t.Helper()
	cfg := &admissionregistrationv1.MutatingWebhookConfiguration{}
	if err := c.Get(ctx, client.ObjectKey{Name: testWebhookConfig}, cfg); err != nil {
		t.Fatalf("getting webhook configuration: %v", err)
	}
	return cfg
}

// checkFilesMatchSecret asserts the cert dir serves exactly the Secret's pair.
func checkFilesMatchSecret(t *testing.T, dir string, s *corev1.Secret) {
	t.Helper()
	for file, key := range map[string]string{CertFileName: SecretCertKey, KeyFileName: SecretKeyKey} {
		got, err := os.ReadFile(filepath.Join(dir, file))
		if err != nil {
			t.Fatalf("reading %s: %v", file, err)
		}
		if !bytes.Equal(got, s.Data[key]) {
			t.Errorf("%s differs from secret key %s", file, key)
		}
	}
}

func TestEnsureFirstRun(t *testing.T) {
	ctx := t.Context()
	c := fake.NewClientBuilder().WithObjects(testWebhookConfiguration()).Build()
	m, dir := newTestManager(t, c, testNow)

	if err := m.Ready(nil); err == nil {
		t.Error("Ready before the first Ensure returned nil")
	}
	if err := m.Ensure(ctx); err != nil {
		t.Fatalf("Ensure: %v", err)
	}
	if err := m.Ready(nil); err != nil {
		t.Errorf("Ready after Ensure: %v", err)
	}

	s := getSecret(ctx, t, c)
	if s.Type != corev1.SecretTypeTLS {
		t.Errorf("secret type %q, want %q", s.Type, corev1.SecretTypeTLS)
	}
	for _, k := range []string{SecretCACertKey, SecretCAKeyKey, SecretCertKey, SecretKeyKey} {
		if len(s.Data[k]) == 0 {
			t.Errorf("secret lacks %s", k)
		}
	}
	if _, ok := s.Data[SecretPreviousCACertKey]; ok {
		t.Errorf("fresh secret has %s", SecretPreviousCACertKey)
	}
	checkFilesMatchSecret(t, dir, s)

	cfg := getWebhookConfig(ctx, t, c)
	for _, wh := range cfg.Webhooks {
		if !bytes.Equal(wh.ClientConfig.CABundle, s.Data[SecretCACertKey]) {
			t.Errorf("webhook %s caBundle is not the secret's CA", wh.Name)
		}
	}
	if cfg.Webhooks[0].ClientConfig.URL == nil || cfg.Webhooks[1].ClientConfig.Service == nil {
		t.Error("injection clobbered the webhooks' url/service")
	}

	// The served certificate verifies for the URL-mode address with the injected bundle.
	if reason := servingRenewalReason(s.Data[SecretCertKey], s.Data[SecretKeyKey], mustParseCert(t, s.Data[SecretCACertKey]),
		[]string{"confighash-webhook.confighash-system.svc"}, []net.IP{net.ParseIP("127.0.0.1")}, testNow, 0); reason != "" {
		t.Errorf("issued certificate is not acceptable: %s", reason)
	}
}

func TestEnsureSecondRunIsNoOp(t *testing.T) {
	ctx := t.Context()
	c := fake.NewClientBuilder().WithObjects(testWebhookConfiguration()).Build()
	m, dir := newTestManager(t, c, testNow)
	if err := m.Ensure(ctx); err != nil {
		t.Fatalf("first Ensure: %v", err)
	}
	secretRV := getSecret(ctx, t, c).ResourceVersion
	configRV := getWebhookConfig(ctx, t, c).ResourceVersion
	before, err := os.Stat(filepath.Join(dir, CertFileName))
	if err != nil {
		t.Fatal(err)
	}

	m.now = func() time.Time { return testNow.Add(24 * time.Hour) }
	if err := m.Ensure(ctx); err != nil {
		t.Fatalf("second Ensure: %v", err)
	}
	if rv := getSecret(ctx, t, c).ResourceVersion; rv != secretRV {
		t.Errorf("secret resourceVersion %s -> %s; second run wrote the secret", secretRV, rv)
	}
	if rv := getWebhookConfig(ctx, t, c).ResourceVersion; rv != configRV {
		t.Errorf("webhook configuration resourceVersion %s -> %s; second run patched it", configRV, rv)
	}
	after, err := os.Stat(filepath.Join(dir, CertFileName))
	if err != nil {
		t.Fatal(err)
	}
	if !os.SameFile(before, after) {
		t.Error("second run rewrote tls.crt")
	}
}

func TestEnsureRenewsNearExpiryServingCertWithSameCA(t *testing.T) {
	ctx := t.Context()
	day := 24 * time.Hour
	issuedAt := testNow.Add(-300 * day) // a 1y certificate with 65 days left: inside the default 1/3 window
	ca := mustCA(t, DefaultCAValidity, issuedAt)
	old := mustServing(t, ca, []string{"confighash-webhook.confighash-system.svc"}, []net.IP{net.ParseIP("127.0.0.1")}, DefaultCertValidity, issuedAt)
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: testSecretKey.Namespace, Name: testSecretKey.Name},
		Type:       corev1.SecretTypeTLS,
		Data: map[string][]byte{
			SecretCACertKey: ca.certPEM, SecretCAKeyKey: ca.keyPEM,
			SecretCertKey: old.certPEM, SecretKeyKey: old.keyPEM,
		},
	}
	c := fake.NewClientBuilder().WithObjects(testWebhookConfiguration(), secret).Build()
	rvBefore := getSecret(ctx, t, c).ResourceVersion
	m, dir := newTestManager(t, c, testNow)

	if err := m.Ensure(ctx); err != nil {
		t.Fatalf("Ensure: %v", err)
	}

	s := getSecret(ctx, t, c)
	if s.ResourceVersion == rvBefore {
		t.Error("secret was not updated")
	}
	if !bytes.Equal(s.Data[SecretCACertKey], ca.certPEM) || !bytes.Equal(s.Data[SecretCAKeyKey], ca.keyPEM) {
		t.Error("CA changed although it was valid")
	}
	if _, ok := s.Data[SecretPreviousCACertKey]; ok {
		t.Errorf("%s set without a CA rotation", SecretPreviousCACertKey)
	}
	if bytes.Equal(s.Data[SecretCertKey], old.certPEM) {
		t.Fatal("serving certificate was not renewed")
	}
	renewed := mustParseCert(t, s.Data[SecretCertKey])
	if err := renewed.CheckSignatureFrom(ca.cert); err != nil {
		t.Errorf("renewed certificate not signed by the existing CA: %v", err)
	}
	if want := testNow.Add(DefaultCertValidity); !renewed.NotAfter.Equal(want) {
		t.Errorf("renewed NotAfter %v, want %v", renewed.NotAfter, want)
	}
	checkFilesMatchSecret(t, dir, s)
	for _, wh := range getWebhookConfig(ctx, t, c).Webhooks {
		if !bytes.Equal(wh.ClientConfig.CABundle, ca.certPEM) {
			t.Errorf("webhook %s caBundle is not the existing CA", wh.Name)
		}
	}
}
