package webhook

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/confighash/confighash/hasher"
	"github.com/confighash/confighash/internal/contract"
)

// benchDeployment reads n ConfigMaps through env keys and a volume.
func benchDeployment(n int) (*appsv1.Deployment, fakeSources) {
	src := fakeSources{}
	d := deployment(func(d *appsv1.Deployment) {
		c := &d.Spec.Template.Spec.Containers[0]
		for i := range n {
			name := fmt.Sprintf("cm-%d", i)
			src[hasher.Source{Kind: hasher.ConfigMap, Name: name}] = map[string]string{"k": "v", "other": "x"}
			c.Env = append(c.Env, corev1.EnvVar{Name: fmt.Sprintf("E%d", i), ValueFrom: &corev1.EnvVarSource{
				ConfigMapKeyRef: &corev1.ConfigMapKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: name}, Key: "k"}}})
		}
	})
	src[hasher.Source{Kind: hasher.ConfigMap, Name: "cfg"}] = map[string]string{"a": "1"}
	return d, src
}

// BenchmarkHandleCreate is the full admission path for a new Deployment
// reading 10 sources: decode, discover, look up, hash, patch.
func BenchmarkHandleCreate(b *testing.B) {
	d, src := benchDeployment(10)
	h := newHandler(b, src)
	req := request(admissionv1.Create, d, nil)
	b.ReportAllocs()
	for b.Loop() {
		if resp := h.Handle(context.Background(), req); len(resp.Patches) == 0 {
			b.Fatal("no patch")
		}
	}
}

// BenchmarkHandleNoOpUpdate is a re-apply: the template is unchanged, so no
// checksum is computed at all.
func BenchmarkHandleNoOpUpdate(b *testing.B) {
	d, src := benchDeployment(10)
	d.Spec.Template.Annotations = map[string]string{contract.ChecksumAnnotation: "v1:x"}
	h := newHandler(b, src)
	req := request(admissionv1.Update, d, d)
	b.ReportAllocs()
	for b.Loop() {
		if resp := h.Handle(context.Background(), req); !resp.Allowed {
			b.Fatal("denied")
		}
	}
}

// BenchmarkEndpointCreate is what the apiserver's call costs the server
// once the request has arrived: the limits, the caller check, the review's
// decoding, the handler and the answer's encoding, for the Deployment of
// BenchmarkHandleCreate sent by an accepted caller.
func BenchmarkEndpointCreate(b *testing.B) {
	body, src := benchReview(b)
	h := newHandler(b, src)
	h.Callers = &Callers{}
	ep := h.Callers.Endpoint(h, Limits{})
	cs := verified("apiserver")
	b.ReportAllocs()
	for b.Loop() {
		r := httptest.NewRequest(http.MethodPost, Path, bytes.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		r.TLS = cs
		rec := httptest.NewRecorder()
		ep.ServeHTTP(rec, r)
		if rec.Code != http.StatusOK || !bytes.Contains(rec.Body.Bytes(), []byte(`"patch"`)) {
			b.Fatalf("HTTP %d %s", rec.Code, rec.Body)
		}
	}
}

// benchReview is the AdmissionReview the apiserver sends for the CREATE of
// benchDeployment(10), and its sources.
func benchReview(b *testing.B) ([]byte, fakeSources) {
	d, src := benchDeployment(10)
	req := request(admissionv1.Create, d, nil)
	body, err := json.Marshal(admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
		Request:  &req.AdmissionRequest,
	})
	if err != nil {
		b.Fatal(err)
	}
	return body, src
}
