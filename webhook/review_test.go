package webhook

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

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
