package app

import (
	"crypto/tls"
	"crypto/x509"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/confighash/confighash/certs"
)

// metricsServerName is what a scraper verifies: the webhook Service, whose
// DNS names are the serving certificate's SANs.
func metricsServerName(o Options) string { return o.ServiceName + "." + o.Namespace + ".svc" }

// scrapeTLS completes a handshake with a server using opts' TLS settings the
// way Prometheus does with ca_file and server_name, and returns the
// certificate it was shown.
func scrapeTLS(t *testing.T, tlsOpts []func(*tls.Config), roots *x509.CertPool, serverName string) (*x509.Certificate, error) {
	t.Helper()
	cfg := &tls.Config{}
	for _, f := range tlsOpts {
		f(cfg)
	}
	l, err := tls.Listen("tcp", "127.0.0.1:0", cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		c, err := l.Accept()
		if err != nil {
			return
		}
		_ = c.(*tls.Conn).Handshake()
		_ = c.Close()
	}()
	conn, err := tls.Dial("tcp", l.Addr().String(), &tls.Config{RootCAs: roots, ServerName: serverName, MinVersion: tls.VersionTLS12})
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	return conn.ConnectionState().PeerCertificates[0], nil
}

// publishedRoots is the pool of the caBundle ConfigMap: all a scraper gets.
func publishedRoots(t *testing.T, c client.Client, o Options) *x509.CertPool {
	t.Helper()
	cm := &corev1.ConfigMap{}
	if err := c.Get(t.Context(), types.NamespacedName{Namespace: o.Namespace, Name: o.CABundleConfigMap}, cm); err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM([]byte(cm.Data[certs.ConfigMapCABundleKey])) {
		t.Fatal("no CA in the published bundle")
	}
	return roots
}

// The metrics server presents the self-managed serving certificate, which
// verifies against the published caBundle for the Service name, and it
// presents the renewed one after a renewal without a restart.
func TestMetricsServeTheServingCertificate(t *testing.T) {
	ctx := t.Context()
	o := DefaultOptions()
	o.CertDir = t.TempDir()
	c := fake.NewClientBuilder().WithObjects(&admissionregistrationv1.MutatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: o.WebhookConfigName},
		Webhooks:   []admissionregistrationv1.MutatingWebhook{{Name: "w.confighash.dev"}},
	}).Build()
	cm := newCertManager(c, o, nil)
	if err := cm.Ensure(ctx); err != nil {
		t.Fatal(err)
	}

	w, err := metricsCertWatcher(o)
	if err != nil {
		t.Fatal(err)
	}
	opts := metricsOptions(o, w)
	if !opts.SecureServing || opts.FilterProvider == nil {
		t.Fatal("metrics are not served over HTTPS behind the token check")
	}
	roots := publishedRoots(t, c, o)
	first, err := scrapeTLS(t, opts.TLSOpts, roots, metricsServerName(o))
	if err != nil {
		t.Fatalf("a scraper verifying %s against the published caBundle: %v", metricsServerName(o), err)
	}
	if _, err := scrapeTLS(t, opts.TLSOpts, roots, "confighash-evil.confighash-system.svc"); err == nil {
		t.Error("the certificate verified for a name it must not hold")
	}

	// Renew: lose the serving certificate, so the next check issues one.
	key := types.NamespacedName{Namespace: o.Namespace, Name: o.CertSecret}
	s := &corev1.Secret{}
	if err := c.Get(ctx, key, s); err != nil {
		t.Fatal(err)
	}
	delete(s.Data, certs.SecretCertKey)
	if err := c.Update(ctx, s); err != nil {
		t.Fatal(err)
	}
	go func() { _ = w.Start(ctx) }()
	if err := cm.Ensure(ctx); err != nil {
		t.Fatal(err)
	}
	// The watcher reloads on the file event (or its poll, every 10 s).
	deadline := time.Now().Add(time.Minute)
	for {
		got, err := scrapeTLS(t, opts.TLSOpts, roots, metricsServerName(o))
		if err != nil {
			t.Fatalf("after renewal: %v", err)
		}
		if !got.Equal(first) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the metrics still serve the old certificate a minute after renewal")
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Without the files the metrics do not start: no silent self-signed
// certificate that a scraper could only accept unverified.
func TestMetricsCertificateMissingIsAnError(t *testing.T) {
	o := DefaultOptions()
	o.CertDir = t.TempDir()
	if _, err := metricsCertWatcher(o); err == nil {
		t.Error("no error for a cert dir without tls.crt and tls.key")
	}
	for name, mod := range map[string]func(*Options){
		"--metrics-secure=false":   func(o *Options) { o.MetricsSecure = false },
		"--metrics-bind-address=0": func(o *Options) { o.MetricsAddr = "0" },
	} {
		o := o
		mod(&o)
		if w, err := metricsCertWatcher(o); w != nil || err != nil {
			t.Errorf("%s: watcher %v, error %v; want neither", name, w, err)
		}
	}
}

// The metrics' listener refuses TLS below 1.2, as the webhook's does.
func TestMetricsTLSMinVersion(t *testing.T) {
	cfg := &tls.Config{}
	for _, f := range metricsOptions(DefaultOptions(), nil).TLSOpts {
		f(cfg)
	}
	if cfg.MinVersion < tls.VersionTLS12 {
		t.Errorf("MinVersion %x, want at least TLS 1.2", cfg.MinVersion)
	}
}
