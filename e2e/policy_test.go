//go:build e2e

package e2e

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/confighash/confighash/e2e/framework"
)

// TestWebhookAnswersNothingForUnservedNamespace plays a pod that reaches
// the webhook's port and POSTs its own AdmissionReview, bypassing the
// apiserver and so the namespaceSelector, naming an unlabelled namespace.
// The Deployment reads a Secret there. The webhook must not stamp it, and
// its answer must be the same whether that Secret exists or not, so that it
// is neither a checksum oracle nor an existence oracle. The same review for
// a labelled namespace is stamped, so the spec would see a stamp.
func TestWebhookAnswersNothingForUnservedNamespace(t *testing.T) {
	url := env.Confighash.WebhookURL()
	if url == "" {
		t.Skip("webhook endpoint is not reachable from the test process on this cluster")
	}
	hc := webhookHTTPClient(t)
	unlabelled, labelled := env.NewNamespace(t, false), env.NewNamespace(t, true)
	for _, ns := range []string{unlabelled, labelled} {
		env.Create(t, configMap(ns, "cfg", map[string]string{"a": "1"}))
		env.Create(t, secret(ns, "sec", map[string]string{"password": "hunter2"}))
	}

	withSecret := postReview(t, hc, url, unlabelled, podSpec("cfg", "sec"))
	withoutSecret := postReview(t, hc, url, unlabelled, podSpec("cfg", "no-such-secret"))
	for name, resp := range map[string]*admissionv1.AdmissionResponse{"secret exists": withSecret, "secret missing": withoutSecret} {
		if !resp.Allowed || resp.Patch != nil || len(resp.Warnings) > 0 {
			t.Errorf("%s: allowed=%v patch=%s warnings=%q; want allowed, no patch, no warning", name, resp.Allowed, resp.Patch, resp.Warnings)
		}
	}
	withSecret.UID, withoutSecret.UID = "", ""
	a, _ := json.Marshal(withSecret)
	b, _ := json.Marshal(withoutSecret)
	if !bytes.Equal(a, b) {
		t.Errorf("the answers tell whether the Secret exists:\nexists:  %s\nmissing: %s", a, b)
	}
	t.Logf("answer for the unlabelled namespace: %s", a)

	if served := postReview(t, hc, url, labelled, podSpec("cfg", "sec")); served.Patch == nil {
		t.Errorf("labelled namespace: no patch (%s); the spec cannot tell a stamp from none", served.Result.Message)
	}
}

// webhookHTTPClient trusts the CA of confighash's self-managed certificate.
func webhookHTTPClient(t *testing.T) *http.Client {
	t.Helper()
	s := &corev1.Secret{}
	if err := env.Client.Get(env.SpecContext(t), client.ObjectKey{Namespace: framework.Namespace, Name: "confighash-webhook-cert"}, s); err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(s.Data["ca.crt"]) {
		t.Fatal("no CA in the cert secret")
	}
	return &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
}

// postReview sends a hand-made AdmissionReview for the CREATE of a
// Deployment with spec in ns, and returns the webhook's response.
func postReview(t *testing.T, hc *http.Client, url, ns string, spec corev1.PodSpec) *admissionv1.AdmissionResponse {
	t.Helper()
	d := deploymentOf(ns, "probe", spec)
	d.TypeMeta = metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"}
	obj, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	return postAdmission(t, hc, url, admissionv1.AdmissionRequest{
		Kind:      metav1.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"},
		Resource:  metav1.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"},
		Name:      d.Name,
		Namespace: ns,
		Operation: admissionv1.Create,
		Object:    runtime.RawExtension{Raw: obj},
	})
}

// postAdmission sends req, with a fresh UID, as an AdmissionReview and
// returns the webhook's response.
func postAdmission(t *testing.T, hc *http.Client, url string, req admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
	t.Helper()
	req.UID = types.UID(fmt.Sprintf("e2e-%d", rand.Uint64()))
	review, err := json.Marshal(admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
		Request:  &req,
	})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := hc.Post(url, "application/json", bytes.NewReader(review))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("HTTP %d: %s", resp.StatusCode, body)
	}
	var out admissionv1.AdmissionReview
	if err := json.Unmarshal(body, &out); err != nil || out.Response == nil {
		t.Fatalf("decoding the answer %s: %v", body, err)
	}
	return out.Response
}
