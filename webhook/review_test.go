package webhook

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

// postReview posts the AdmissionReview body to srv, as the apiserver does,
// and records the answer.
func postReview(srv http.Handler, body []byte) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodPost, Path, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	srv.ServeHTTP(rec, req)
	return rec
}

func TestReviewsStatusCodes(t *testing.T) {
	srv := newReviews(&admission.Webhook{Handler: newHandler(t, fakeSources{})})
	deploymentReview := `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u1",` +
		`"kind":{"group":"apps","version":"v1","kind":"Deployment"},"operation":"CREATE","object":` + string(mustJSON(deployment())) + `}}`
	tests := map[string]struct {
		body        string
		contentType string
		want        int
	}{
		"empty body":          {body: "", contentType: "application/json", want: http.StatusBadRequest},
		"not json":            {body: "{{", contentType: "application/json", want: http.StatusBadRequest},
		"wrong content type":  {body: deploymentReview, contentType: "text/plain", want: http.StatusBadRequest},
		"no request":          {body: `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"}`, contentType: "application/json", want: http.StatusBadRequest},
		"too large":           {body: `{"x":"` + strings.Repeat("a", 8<<20) + `"}`, contentType: "application/json", want: http.StatusRequestEntityTooLarge},
		"a real review is OK": {body: deploymentReview, contentType: "application/json", want: http.StatusOK},
		// As the deserializer answers it, fast path or not.
		"apiVersion with two slashes": {body: strings.Replace(deploymentReview, `"admission.k8s.io/v1"`, `"admission.k8s.io/v1/x"`, 1), contentType: "application/json", want: http.StatusBadRequest},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodPost, Path, bytes.NewBufferString(tc.body))
			req.Header.Set("Content-Type", tc.contentType)
			rec := httptest.NewRecorder()
			srv.ServeHTTP(rec, req)
			if rec.Code != tc.want {
				t.Errorf("status = %d, want %d; body %s", rec.Code, tc.want, rec.Body.String())
			}
		})
	}
}

// TestReviewsAnswerInKind: a v1beta1 review (the same type as v1) is
// answered as v1beta1, and one without apiVersion and kind as v1, as
// controller-runtime answers them; the answer is one JSON document.
func TestReviewsAnswerInKind(t *testing.T) {
	srv := newReviews(&admission.Webhook{Handler: newHandler(t, fakeSources{})})
	object := string(mustJSON(deployment()))
	tests := map[string]struct{ head, want string }{
		"v1":      {head: `"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview",`, want: "admission.k8s.io/v1"},
		"v1beta1": {head: `"apiVersion":"admission.k8s.io/v1beta1","kind":"AdmissionReview",`, want: "admission.k8s.io/v1beta1"},
		"none":    {head: ``, want: "admission.k8s.io/v1"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			body := `{` + tc.head + `"request":{"uid":"u1","kind":{"group":"apps","version":"v1","kind":"Deployment"},"namespace":"ns","operation":"CREATE","object":` + object + `}}`
			rec := postReview(srv, []byte(body))
			var got admissionv1.AdmissionReview
			dec := json.NewDecoder(rec.Body)
			if err := dec.Decode(&got); err != nil || got.Response == nil || dec.More() {
				t.Fatalf("HTTP %d, not one review (%v)", rec.Code, err)
			}
			if got.APIVersion != tc.want || got.Kind != "AdmissionReview" || got.Response.UID != "u1" || !got.Response.Allowed {
				t.Errorf("answer %s/%s uid %q allowed %v, want %s/AdmissionReview uid u1 allowed", got.APIVersion, got.Kind, got.Response.UID, got.Response.Allowed, tc.want)
			}
		})
	}
}
