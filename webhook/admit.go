package webhook

import (
	"encoding/json"
	"net/http"

	admissionv1 "k8s.io/api/admission/v1"
)

// admitReadable makes sure no readable request is denied, whatever happened
// below it: controller-runtime answers a panic in the handler, or a response
// it cannot encode, with allowed: false. Any answer to a request with a UID
// that is a denial becomes an admission with a warning that reveals nothing.
// Answers without a UID are left alone: they are for requests that could
// not be read, which WithStatusCodes turns into HTTP errors.
func admitReadable(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &recorder{header: w.Header()}
		next.ServeHTTP(rec, r)
		body := rec.body.Bytes()
		// Every answer passes here, so it is read through this small shape;
		// the full review is decoded only for the rare denial to rewrite.
		var answer struct {
			Response *struct {
				UID     string `json:"uid"`
				Allowed bool   `json:"allowed"`
			} `json:"response"`
		}
		var review admissionv1.AdmissionReview
		if json.Unmarshal(body, &answer) == nil && answer.Response != nil &&
			answer.Response.UID != "" && !answer.Response.Allowed &&
			json.Unmarshal(body, &review) == nil && review.Response != nil {
			review.Response = &admissionv1.AdmissionResponse{
				UID:      review.Response.UID,
				Allowed:  true,
				Warnings: []string{unhandledWarning},
			}
			if b, err := json.Marshal(review); err == nil {
				body = b
				rec.code = http.StatusOK
			}
		}
		if rec.code != 0 {
			w.WriteHeader(rec.code)
		}
		_, _ = w.Write(body)
	})
}
