//go:build e2e

package deploy

import (
	"context"
	"crypto/x509"
	"crypto/x509/pkix"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlwebhook "sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/confighash/confighash/certs"
	"github.com/confighash/confighash/e2e/controlplane"
)

// TestCARotationOnARealAPIServer runs a self-managed CA rotation (package
// certs, as --cert-mode=self runs it) against the local kube-apiserver,
// which calls a webhook served from the manager's cert dir with
// failurePolicy Fail, so that any moment at which the apiserver does not
// trust the served certificate fails a write. A ConfigMap is created every
// 300 ms from the publication of the next CA, through the switch, to the
// drop of the old CA; none may fail.
func TestCARotationOnARealAPIServer(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cp := controlPlane(t)
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(cp.RESTConfig(), client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	// Fresh names, so the test can run again on the same control plane.
	suffix := strconv.FormatInt(time.Now().UnixNano()%1_000_000, 10)
	ns, cfgName, label := "ca-rotation-"+suffix, "ca-rotation-e2e-"+suffix, "ca-rotation-e2e-"+suffix
	secretKey := types.NamespacedName{Namespace: ns, Name: "webhook-cert"}
	port := freePorts(t, 1)[0]
	dir := filepath.Join(t.TempDir(), "certs")

	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: map[string]string{label: "true"}}}); err != nil {
		t.Fatal(err)
	}
	oldCA, secret := nearExpiryCertSecret(t, secretKey)
	if err := c.Create(ctx, secret); err != nil {
		t.Fatal(err)
	}
	url := "https://127.0.0.1:" + strconv.Itoa(port) + "/mutate"
	if err := c.Create(ctx, &admissionregistrationv1.MutatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: cfgName},
		Webhooks: []admissionregistrationv1.MutatingWebhook{{
			Name:                    "rotation.e2e.confighash.dev",
			ClientConfig:            admissionregistrationv1.WebhookClientConfig{URL: &url},
			Rules:                   []admissionregistrationv1.RuleWithOperations{{Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create}, Rule: admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}}}},
			NamespaceSelector:       &metav1.LabelSelector{MatchLabels: map[string]string{label: "true"}},
			FailurePolicy:           ptr.To(admissionregistrationv1.Fail),
			SideEffects:             ptr.To(admissionregistrationv1.SideEffectClassNone),
			AdmissionReviewVersions: []string{"v1"},
			TimeoutSeconds:          ptr.To[int32](5),
		}},
	}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = c.Delete(context.Background(), &admissionregistrationv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: cfgName}})
	})

	m := certs.New(c, certs.Options{
		SecretKey:          secretKey,
		WebhookConfigName:  cfgName,
		IPAddresses:        []net.IP{net.ParseIP("127.0.0.1")},
		CertDir:            dir,
		CheckInterval:      2 * time.Second,
		CAPropagationDelay: 3 * time.Second,
		CAOverlap:          5 * time.Second,
	})
	// The first pass publishes the next CA and writes the (old) files the
	// server needs to start.
	if err := m.Ensure(ctx); err != nil {
		t.Fatal(err)
	}
	var calls atomic.Int64
	srv := ctrlwebhook.NewServer(ctrlwebhook.Options{Host: "127.0.0.1", Port: port, CertDir: dir})
	srv.Register("/mutate", &admission.Webhook{Handler: admission.HandlerFunc(func(context.Context, admission.Request) admission.Response {
		calls.Add(1)
		return admission.Allowed("")
	})})
	srvCtx, stop := context.WithCancel(ctx)
	defer stop()
	go func() { _ = srv.Start(srvCtx) }()
	for srv.StartedChecker()(nil) != nil {
		if ctx.Err() != nil {
			t.Fatal("the webhook server did not start")
		}
		time.Sleep(100 * time.Millisecond)
	}

	var sawOld, sawNew bool
	failures := 0
	for i := 0; ; i++ {
		if ctx.Err() != nil {
			t.Fatalf("the rotation did not finish: old served %v, new served %v", sawOld, sawNew)
		}
		if err := m.Ensure(ctx); err != nil {
			t.Fatalf("Ensure: %v", err)
		}
		served := readServedCert(t, dir)
		if served.CheckSignatureFrom(oldCA) == nil {
			sawOld = true
		} else {
			sawNew = true
		}
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, GenerateName: "probe-"}}
		if err := c.Create(ctx, cm); err != nil {
			failures++
			t.Errorf("write %d refused while serving a certificate from the %s CA: %v", i, map[bool]string{true: "old", false: "new"}[served.CheckSignatureFrom(oldCA) == nil], err)
		}
		s := &corev1.Secret{}
		if err := c.Get(ctx, secretKey, s); err != nil {
			t.Fatal(err)
		}
		_, pending := s.Data[certs.SecretNextCACertKey]
		_, overlap := s.Data[certs.SecretPreviousCACertKey]
		if sawNew && !pending && !overlap {
			break
		}
		time.Sleep(300 * time.Millisecond)
	}
	if !sawOld || !sawNew {
		t.Errorf("served the old CA's certificate: %v, the new one's: %v; want both in turn", sawOld, sawNew)
	}
	if calls.Load() == 0 {
		t.Error("the apiserver never called the webhook")
	}
	t.Logf("%d admission calls during the rotation, %d refused", calls.Load(), failures)
}

// nearExpiryCertSecret is a certificate Secret whose CA has one of its ten
// years left (inside the default renewal window of a third), with a serving
// certificate for 127.0.0.1 that needs no renewal.
func nearExpiryCertSecret(t *testing.T, key types.NamespacedName) (*x509.Certificate, *corev1.Secret) {
	t.Helper()
	now := time.Now()
	ca, err := controlplane.Issue(&x509.Certificate{
		Subject:   pkix.Name{CommonName: "old-ca"},
		NotBefore: now.Add(-9 * 365 * 24 * time.Hour), NotAfter: now.Add(365 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true, IsCA: true,
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := controlplane.Issue(&x509.Certificate{
		Subject:     pkix.Name{CommonName: "127.0.0.1"},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		NotBefore:   now.Add(-time.Hour), NotAfter: now.Add(300 * 24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}, ca)
	if err != nil {
		t.Fatal(err)
	}
	return ca.Cert, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name},
		Type:       corev1.SecretTypeTLS,
		Data: map[string][]byte{
			certs.SecretCACertKey: ca.CertPEM,
			certs.SecretCAKeyKey:  ca.KeyPEM,
			certs.SecretCertKey:   leaf.CertPEM,
			certs.SecretKeyKey:    leaf.KeyPEM,
		},
	}
}

func readServedCert(t *testing.T, dir string) *x509.Certificate {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, certs.CertFileName))
	if err != nil {
		t.Fatal(err)
	}
	cert, err := leafOf(b)
	if err != nil {
		t.Fatalf("the served certificate: %v", err)
	}
	return cert
}
