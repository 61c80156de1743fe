//go:build e2e

package deploy

import (
	"bytes"
	"context"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/confighash/confighash/e2e/controlplane"
)

// TestCAInjectorInjectsFromTheCertificate proves the cert-manager overlay's
// `cert-manager.io/inject-ca-from` with cert-manager's own cainjector code:
// the rendered Issuers, Certificates and MutatingWebhookConfiguration are
// applied to the local API server (with components/pinning, whose pod
// webhook is a second entry), the test issues the serving
// Certificate's Secret as cert-manager's controller would (no cert-manager
// controller runs here), and every webhook of the configuration must get
// that Secret's ca.crt as its caBundle, written by the cainjector, and take
// in the new CA when the CA is replaced (next to the old one, which has not
// expired).
func TestCAInjectorInjectsFromTheCertificate(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	// With the pinning component: its pod webhook is a second entry,
	// which must get the caBundle too.
	r := decode(t, renderNamed(t, pinningRenders(t), "kustomize/cert-manager+pinning"))
	if len(r.MWC.Webhooks) != 2 {
		t.Fatal("no cert-manager render with the pinning component's two webhooks")
	}
	serving := servingCert(t, r)
	if serving == nil || r.MWC == nil {
		t.Fatal("the cert-manager overlay renders no serving Certificate or no webhook configuration")
	}
	c := controlPlane(t)
	installCertManagerCRDs(ctx, t)
	admin := adminClient(t, c)

	namespaces, rest := splitNamespaces(r.Objects)
	apply(ctx, t, namespaces, false)
	certObjs := kinds(rest, "Issuer", "Certificate", "MutatingWebhookConfiguration")
	// Both overlays name the configuration confighash, and the injector
	// merges into the caBundle it finds: start from none.
	deleteObjects(t, certObjs, serving.Namespace, serving.Spec.SecretName)
	// Registered before the injector starts, so it runs after the injector
	// has stopped (cleanups run last-in first-out).
	t.Cleanup(func() { deleteObjects(t, certObjs, serving.Namespace, serving.Spec.SecretName) })
	apply(ctx, t, certObjs, false)

	var log controlplane.SyncBuffer
	startCAInjector(t, c.RESTConfig(), &log)

	secret, ca1, err := certificateSecret(serving, "confighash-e2e-ca-1")
	if err != nil {
		t.Fatal(err)
	}
	begin := time.Now()
	if _, err := admin.CoreV1().Secrets(secret.Namespace).Create(ctx, secret, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating the Certificate's Secret: %v", err)
	}
	waitForCABundle(ctx, t, admin, r.MWC.Name, len(r.MWC.Webhooks), ca1)
	t.Logf("caBundle injected %s after the Secret was created", time.Since(begin).Round(time.Millisecond))

	// Rotation: a new CA in the same Secret, as cert-manager writes it when
	// the CA changes (the overlay's CA keeps its key across renewals, but is
	// re-issued with a new one if its Secret is lost). cert-manager v1.21's
	// cainjector merges (feature gate CAInjectorMerging, GA and on by
	// default): the new CA is appended and the old one stays in the bundle
	// until it expires, so the API server keeps trusting serving
	// certificates signed by either while the pods pick up the new files.
	rotated, ca2, err := certificateSecret(serving, "confighash-e2e-ca-2")
	if err != nil {
		t.Fatal(err)
	}
	live, err := admin.CoreV1().Secrets(secret.Namespace).Get(ctx, secret.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	live.Data = rotated.Data
	begin = time.Now()
	if _, err := admin.CoreV1().Secrets(secret.Namespace).Update(ctx, live, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("rotating the CA in the Certificate's Secret: %v", err)
	}
	waitForCABundle(ctx, t, admin, r.MWC.Name, len(r.MWC.Webhooks), slices.Concat(ca1, ca2))
	t.Logf("caBundle took in the rotated CA %s after the Secret was updated", time.Since(begin).Round(time.Millisecond))

	// The cainjector, not anything else, owns the field it wrote.
	mwc, err := admin.AdmissionregistrationV1().MutatingWebhookConfigurations().Get(ctx, r.MWC.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var managers []string
	for _, f := range mwc.ManagedFields {
		if f.FieldsV1 != nil && bytes.Contains(f.FieldsV1.GetRawBytes(), []byte(`"f:caBundle"`)) {
			managers = append(managers, f.Manager)
		}
	}
	if !slices.Contains(managers, "cert-manager-cainjector") {
		t.Errorf("caBundle is managed by %v, want cert-manager-cainjector among them", managers)
	}
}

// waitForCABundle waits until the configuration has want webhooks, each
// with caBundle exactly ca (PEM, as the injector re-encodes it).
func waitForCABundle(ctx context.Context, t *testing.T, admin kubernetes.Interface, name string, want int, ca []byte) {
	t.Helper()
	var last [][]byte
	err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		mwc, err := admin.AdmissionregistrationV1().MutatingWebhookConfigurations().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		last = last[:0]
		for _, w := range mwc.Webhooks {
			last = append(last, w.ClientConfig.CABundle)
		}
		if len(mwc.Webhooks) != want {
			return false, nil
		}
		for _, w := range mwc.Webhooks {
			if !bytes.Equal(w.ClientConfig.CABundle, ca) {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		t.Fatalf("MutatingWebhookConfiguration %s: caBundle never became the expected CAs (%d webhooks, bundles of %d bytes, want %d): %v",
			name, len(last), lens(last), len(ca), err)
	}
}

func lens(bs [][]byte) []int {
	out := make([]int, len(bs))
	for i, b := range bs {
		out[i] = len(b)
	}
	return out
}

// kinds picks the objects of the given kinds.
func kinds(objs []*unstructured.Unstructured, kind ...string) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, u := range objs {
		if slices.Contains(kind, u.GetKind()) {
			out = append(out, u)
		}
	}
	return out
}

// deleteObjects removes what the test created, so that later tests on the
// same control plane start from the rendered objects alone.
func deleteObjects(t *testing.T, objs []*unstructured.Unstructured, secretNamespace, secretName string) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	stream, err := ToYAMLStream(objs)
	if err != nil {
		t.Error(err)
		return
	}
	if _, _, err := kubectl(ctx, t, stream, "delete", "--ignore-not-found", "-f", "-"); err != nil {
		t.Error(err)
	}
	if _, _, err := kubectl(ctx, t, nil, "delete", "secret", "--ignore-not-found", "-n", secretNamespace, secretName); err != nil {
		t.Error(err)
	}
}
