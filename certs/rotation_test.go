package certs

import (
	"context"
	"crypto/x509"
	"errors"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

// trustNothing is a webhook configuration that holds no CA yet.
func trustNothing(*x509.Certificate) bool { return false }

// nearExpirySecret is a Secret whose CA is inside its renewal window (2500
// of 3650 days gone) with a fresh serving certificate from it.
func nearExpirySecret(t *testing.T, now time.Time) (*corev1.Secret, *keyPair) {
	t.Helper()
	ca := mustCA(t, DefaultCAValidity, now.Add(-2500*24*time.Hour))
	serving := mustServing(t, ca, []string{"confighash-webhook.confighash-system.svc"}, []net.IP{net.ParseIP("127.0.0.1")}, 30*24*time.Hour, now)
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: testSecretKey.Namespace, Name: testSecretKey.Name},
		Type:       corev1.SecretTypeTLS,
		Data: map[string][]byte{
			SecretCACertKey: ca.certPEM, SecretCAKeyKey: ca.keyPEM,
			SecretCertKey: serving.certPEM, SecretKeyKey: serving.keyPEM,
		},
	}, ca
}

// servedCert is the certificate in the cert dir: what the webhook serves.
func servedCert(t *testing.T, dir string) *x509.Certificate {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, CertFileName))
	if err != nil {
		t.Fatal(err)
	}
	return mustParseCert(t, b)
}

// trustedByConfig checks that every webhook's caBundle verifies cert: the
// apiserver would accept what the replica serves.
func trustedByConfig(ctx context.Context, t *testing.T, c client.Client, cert *x509.Certificate, at time.Time) {
	t.Helper()
	for _, wh := range getWebhookConfig(ctx, t, c).Webhooks {
		roots := x509.NewCertPool()
		roots.AppendCertsFromPEM(wh.ClientConfig.CABundle)
		if _, err := cert.Verify(x509.VerifyOptions{Roots: roots, CurrentTime: at}); err != nil {
			t.Errorf("webhook %s: the served certificate does not verify against the caBundle: %v", wh.Name, err)
		}
	}
}

func bundleSize(ctx context.Context, t *testing.T, c client.Client) int {
	t.Helper()
	n := 0
	for rest := getWebhookConfig(ctx, t, c).Webhooks[0].ClientConfig.CABundle; ; n++ {
		_, rest = pemDecode(rest)
		if rest == nil {
			return n
		}
	}
}

// TestEnsureRotatesCAInStages walks a CA rotation with a fake clock through
// Ensure: the next CA is published in the caBundle first while the served
// certificate stays; the switch comes only CAPropagationDelay after the
// configuration was read back holding the next CA; the old CA stays for
// CAOverlap and then leaves. At every step the apiserver's caBundle verifies
// what the replica serves.
func TestEnsureRotatesCAInStages(t *testing.T) {
	ctx := t.Context()
	t0 := testNow
	secret, oldCA := nearExpirySecret(t, t0)
	c := fake.NewClientBuilder().WithObjects(testWebhookConfiguration(), secret).Build()
	m, dir := newTestManager(t, c, t0)
	prop, overlap := m.opts.CAPropagationDelay, m.opts.CAOverlap
	at := func(now time.Time) {
		t.Helper()
		m.now = func() time.Time { return now }
		if err := m.Ensure(ctx); err != nil {
			t.Fatalf("Ensure at %s: %v", now, err)
		}
		trustedByConfig(ctx, t, c, servedCert(t, dir), now)
	}

	// 1. Publish: the next CA joins the bundle, nothing is signed with it.
	at(t0)
	s := getSecret(ctx, t, c)
	if len(s.Data[SecretNextCACertKey]) == 0 {
		t.Fatal("no next CA published")
	}
	nextCA := mustParseCert(t, s.Data[SecretNextCACertKey])
	if err := servedCert(t, dir).CheckSignatureFrom(oldCA.cert); err != nil {
		t.Fatalf("the serving certificate switched at publication: %v", err)
	}
	if n := bundleSize(ctx, t, c); n != 2 {
		t.Errorf("caBundle holds %d CAs after publication, want 2 (current and next)", n)
	}
	if due := m.nextCheckIn(); due > rotationPoll+2*time.Second {
		t.Errorf("next check in %s after publication, want within %s", due, rotationPoll)
	}

	// 2. Observe: the next check reads the next CA back and starts the clock.
	t1 := t0.Add(rotationPoll)
	at(t1)
	if got := string(getSecret(ctx, t, c).Data[SecretNextCATrustedSinceKey]); got != string(formatTime(t1)) {
		t.Fatalf("trusted-since %q, want %q", got, formatTime(t1))
	}

	// 3. Not before the propagation delay.
	at(t1.Add(prop - time.Second))
	if err := servedCert(t, dir).CheckSignatureFrom(oldCA.cert); err != nil {
		t.Fatalf("switched before the propagation delay: %v", err)
	}

	// 4. Switch: the serving certificate now comes from the next CA; the
	// old CA stays in the bundle.
	t2 := t1.Add(prop)
	at(t2)
	if err := servedCert(t, dir).CheckSignatureFrom(nextCA); err != nil {
		t.Fatalf("the serving certificate did not switch to the next CA: %v", err)
	}
	s = getSecret(ctx, t, c)
	if !mustParseCert(t, s.Data[SecretCACertKey]).Equal(nextCA) || !mustParseCert(t, s.Data[SecretPreviousCACertKey]).Equal(oldCA.cert) {
		t.Fatal("after the switch the Secret's current CA is not the next CA, or its previous CA not the old one")
	}
	if _, ok := s.Data[SecretNextCACertKey]; ok {
		t.Error("next CA still pending after the switch")
	}
	if n := bundleSize(ctx, t, c); n != 2 {
		t.Errorf("caBundle holds %d CAs during the overlap, want 2", n)
	}
	// A replica that has not switched yet still serves the old certificate,
	// and the apiserver still trusts it.
	trustedByConfig(ctx, t, c, mustParseCert(t, secret.Data[SecretCertKey]), t2)

	// 5. Drop: the old CA leaves after the overlap, not before.
	at(t2.Add(overlap - time.Second))
	if n := bundleSize(ctx, t, c); n != 2 {
		t.Errorf("caBundle holds %d CAs before the overlap ended, want 2", n)
	}
	at(t2.Add(overlap))
	if _, ok := getSecret(ctx, t, c).Data[SecretPreviousCACertKey]; ok {
		t.Error("the old CA is still in the Secret after the overlap")
	}
	if n := bundleSize(ctx, t, c); n != 1 {
		t.Errorf("caBundle holds %d CAs after the overlap, want 1", n)
	}
}

// TestEnsureRotationWaitsForTheConfiguration: while the webhook
// configuration does not hold the next CA (injection keeps failing, or a
// re-apply dropped the caBundle), the serving certificate never switches,
// however long it waits, as long as the current CA is valid.
func TestEnsureRotationWaitsForTheConfiguration(t *testing.T) {
	ctx := t.Context()
	t0 := testNow
	secret, oldCA := nearExpirySecret(t, t0)
	failPatch := true
	c := interceptor.NewClient(fake.NewClientBuilder().WithObjects(testWebhookConfiguration(), secret).Build(), interceptor.Funcs{
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			if failPatch {
				return errors.New("apiserver unavailable")
			}
			return c.Patch(ctx, obj, patch, opts...)
		},
	})
	m, dir := newTestManager(t, c, t0)
	for _, d := range []time.Duration{0, time.Minute, time.Hour, 30 * 24 * time.Hour} {
		m.now = func() time.Time { return t0.Add(d) }
		_ = m.Ensure(ctx) // fails: injection fails
		if err := servedCert(t, dir).CheckSignatureFrom(oldCA.cert); err != nil {
			t.Fatalf("after %s without the next CA in the configuration, the serving certificate switched", d)
		}
	}
	if _, ok := getSecret(ctx, t, c).Data[SecretNextCATrustedSinceKey]; ok {
		t.Fatal("trusted-since recorded although the configuration never held the next CA")
	}

	// Once injected and read back, the clock starts; a configuration that
	// loses the CA again stops it.
	failPatch = false
	t1 := t0.Add(31 * 24 * time.Hour)
	m.now = func() time.Time { return t1 }
	for range 2 {
		if err := m.Ensure(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if _, ok := getSecret(ctx, t, c).Data[SecretNextCATrustedSinceKey]; !ok {
		t.Fatal("trusted-since not recorded once the configuration held the next CA")
	}
	cfg := getWebhookConfig(ctx, t, c)
	for i := range cfg.Webhooks {
		cfg.Webhooks[i].ClientConfig.CABundle = nil // kubectl apply of the manifest
	}
	if err := c.Update(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	failPatch = true
	m.now = func() time.Time { return t1.Add(time.Hour) }
	_ = m.Ensure(ctx)
	if _, ok := getSecret(ctx, t, c).Data[SecretNextCATrustedSinceKey]; ok {
		t.Error("trusted-since kept although the configuration lost the next CA")
	}
	if err := servedCert(t, dir).CheckSignatureFrom(oldCA.cert); err != nil {
		t.Error("switched although the configuration lost the next CA")
	}
}
