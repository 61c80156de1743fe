package certs

import (
	"bytes"
	"context"
	"crypto/x509"
	"errors"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

const testBundleConfigMap = "confighash-ca-bundle"

func newPublishingManager(t *testing.T, c client.Client, now time.Time) (*Manager, string) {
	t.Helper()
	m, dir := newTestManager(t, c, now)
	m.opts.CABundleConfigMap = testBundleConfigMap
	return m, dir
}

func getBundleConfigMap(ctx context.Context, t *testing.T, c client.Client) *corev1.ConfigMap {
	t.Helper()
	cm := &corev1.ConfigMap{}
	if err := c.Get(ctx, types.NamespacedName{Namespace: testSecretKey.Namespace, Name: testBundleConfigMap}, cm); err != nil {
		t.Fatalf("getting the caBundle ConfigMap: %v", err)
	}
	return cm
}

// trustedByConfigMap checks that the published bundle verifies cert for the
// Service name, as a Prometheus with server_name would.
func trustedByConfigMap(ctx context.Context, t *testing.T, c client.Client, cert *x509.Certificate, at time.Time) {
	t.Helper()
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM([]byte(getBundleConfigMap(ctx, t, c).Data[ConfigMapCABundleKey])) {
		t.Fatal("the published caBundle holds no certificate")
	}
	if _, err := cert.Verify(x509.VerifyOptions{Roots: roots, CurrentTime: at, DNSName: "confighash-webhook.confighash-system.svc"}); err != nil {
		t.Errorf("the served certificate does not verify against the published caBundle: %v", err)
	}
}

// The ConfigMap gets exactly the webhooks' caBundle and no key; a steady
// state writes nothing; an edited ConfigMap is put back.
func TestEnsurePublishesTheCABundle(t *testing.T) {
	ctx := t.Context()
	c := fake.NewClientBuilder().WithObjects(testWebhookConfiguration()).Build()
	m, dir := newPublishingManager(t, c, testNow)
	if err := m.Ensure(ctx); err != nil {
		t.Fatal(err)
	}
	cm := getBundleConfigMap(ctx, t, c)
	if got, want := cm.Data[ConfigMapCABundleKey], string(getWebhookConfig(ctx, t, c).Webhooks[0].ClientConfig.CABundle); got != want || len(cm.Data) != 1 || len(cm.BinaryData) != 0 {
		t.Errorf("ConfigMap data %v, want only %s with the webhooks' caBundle", cm.Data, ConfigMapCABundleKey)
	}
	if bytes.Contains([]byte(cm.Data[ConfigMapCABundleKey]), []byte("PRIVATE KEY")) {
		t.Fatal("the published bundle holds a private key")
	}
	trustedByConfigMap(ctx, t, c, servedCert(t, dir), testNow)

	rv := cm.ResourceVersion
	if err := m.Ensure(ctx); err != nil {
		t.Fatal(err)
	}
	if got := getBundleConfigMap(ctx, t, c).ResourceVersion; got != rv {
		t.Errorf("a steady-state Ensure rewrote the ConfigMap (resourceVersion %s -> %s)", rv, got)
	}

	cm.Data[ConfigMapCABundleKey] = "edited"
	if err := c.Update(ctx, cm); err != nil {
		t.Fatal(err)
	}
	if err := m.Ensure(ctx); err != nil {
		t.Fatal(err)
	}
	trustedByConfigMap(ctx, t, c, servedCert(t, dir), testNow)
}

// A CA rotation switches the serving certificate only once the ConfigMap
// holds the next CA too, so a scraper that trusts the ConfigMap verifies the
// metrics at every step. Here the ConfigMap cannot be written for a month,
// then can.
func TestEnsureRotationWaitsForTheBundleConfigMap(t *testing.T) {
	ctx := t.Context()
	t0 := testNow
	secret, oldCA := nearExpirySecret(t, t0)
	failWrite := true
	failing := func(obj client.Object) bool { _, ok := obj.(*corev1.ConfigMap); return ok && failWrite }
	c := interceptor.NewClient(fake.NewClientBuilder().WithObjects(testWebhookConfiguration(), secret).Build(), interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			if failing(obj) {
				return errors.New("forbidden")
			}
			return c.Create(ctx, obj, opts...)
		},
		Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
			if failing(obj) {
				return errors.New("forbidden")
			}
			return c.Update(ctx, obj, opts...)
		},
	})
	m, dir := newPublishingManager(t, c, t0)
	for _, d := range []time.Duration{0, time.Hour, 30 * 24 * time.Hour} {
		m.now = func() time.Time { return t0.Add(d) }
		if err := m.Ensure(ctx); err == nil {
			t.Fatal("Ensure succeeded although the ConfigMap could not be written")
		}
		if err := servedCert(t, dir).CheckSignatureFrom(oldCA.cert); err != nil {
			t.Fatalf("after %s without the next CA in the ConfigMap, the serving certificate switched", d)
		}
	}
	// Not in the Secret either, where another replica would pick it up.
	if got := getSecret(ctx, t, c).Data[SecretCACertKey]; !bytes.Equal(got, oldCA.certPEM) {
		t.Fatal("the Secret switched CA although the ConfigMap never held the next CA")
	}

	failWrite = false
	t1 := t0.Add(31 * 24 * time.Hour)
	for _, at := range []time.Time{t1, t1.Add(time.Second), t1.Add(DefaultCAPropagationDelay + 2*time.Second)} {
		m.now = func() time.Time { return at }
		if err := m.Ensure(ctx); err != nil {
			t.Fatal(err)
		}
		trustedByConfigMap(ctx, t, c, servedCert(t, dir), at)
	}
	if err := servedCert(t, dir).CheckSignatureFrom(oldCA.cert); err == nil {
		t.Error("the serving certificate did not switch once the ConfigMap held the next CA for the propagation delay")
	}
}
