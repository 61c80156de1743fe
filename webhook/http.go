package webhook

import (
	"bytes"
	"encoding/json"
	"net/http"
)

// WithStatusCodes wraps an admission endpoint so that a request it could not
// read at all (empty, not an AdmissionReview, over the size limit) gets an
// HTTP 4xx, not a 200 whose body hides the error. The apiserver never sends
// such requests; a person or a probe poking the endpoint does, and deserves
// a plain answer. Readable requests are answered as before: the apiserver
// expects 200 with the verdict inside.
func WithStatusCodes(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &recorder{header: w.Header()}
		next.ServeHTTP(rec, r)
		// The response is one small AdmissionReview, so buffering it is cheap.
		var review struct {
			Response *struct {
				UID    string `json:"uid"`
				Status *struct {
					Code int `json:"code"`
				} `json:"status"`
			} `json:"response"`
		}
		code := rec.code
		if code == 0 {
			code = http.StatusOK
		}
		if code == http.StatusOK && json.Unmarshal(rec.body.Bytes(), &review) == nil &&
			review.Response != nil && review.Response.UID == "" &&
			review.Response.Status != nil && review.Response.Status.Code >= 400 {
			code = review.Response.Status.Code
		}
		w.WriteHeader(code)
		_, _ = w.Write(rec.body.Bytes())
	})
}

type recorder struct {
	header http.Header
	body   bytes.Buffer
	code   int
}

func (r *recorder) Header() http.Header         { return r.header }
func (r *recorder) Write(b []byte) (int, error) { return r.body.Write(b) }
func (r *recorder) WriteHeader(code int)        { r.code = code }
