package webhook

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"

	admissionv1 "k8s.io/api/admission/v1"
	admissionv1beta1 "k8s.io/api/admission/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
	kjson "sigs.k8s.io/json"
)

// reviews is the HTTP stage of the endpoint: it reads the AdmissionReview,
// has wh answer it, and writes the answer once, typed, as controller-runtime's
// admission.Webhook.ServeHTTP does, with the one rewrite of the answer
// (answer) applied before it is encoded: nothing is buffered or decoded
// again. wh.Handle keeps what controller-runtime adds around the handler:
// the request's logger, panic recovery (unless RecoverPanic is false, as in
// the fuzz test) and the patch's encoding.
type reviews struct {
	wh    *admission.Webhook
	codec runtime.Decoder
}

// newReviews decodes reviews as controller-runtime does: v1 and v1beta1,
// through the universal deserializer of a scheme that knows both (built as
// their packages' AddToScheme builds it, which cannot fail).
func newReviews(wh *admission.Webhook) *reviews {
	scheme := runtime.NewScheme()
	for gv, review := range map[schema.GroupVersion]runtime.Object{
		admissionv1.SchemeGroupVersion:      &admissionv1.AdmissionReview{},
		admissionv1beta1.SchemeGroupVersion: &admissionv1beta1.AdmissionReview{},
	} {
		scheme.AddKnownTypes(gv, review)
		metav1.AddToGroupVersion(scheme, gv)
	}
	return &reviews{wh: wh, codec: serializer.NewCodecFactory(scheme).UniversalDeserializer()}
}

// maxReviewBytes is the largest review read: controller-runtime's limit,
// the same figure as DefaultMaxBodyBytes. Limits refuses larger bodies
// before this stage reads them; without Limits (tests) this stage does.
const maxReviewBytes = DefaultMaxBodyBytes

func (s *reviews) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	if r.Body == nil || r.Body == http.NoBody {
		s.unreadable(w, r, http.StatusBadRequest, errors.New("request body is empty"))
		return
	}
	defer r.Body.Close()
	limited := &io.LimitedReader{R: r.Body, N: maxReviewBytes}
	body, err := io.ReadAll(limited)
	if err != nil {
		s.unreadable(w, r, http.StatusBadRequest, err)
		return
	}
	if limited.N <= 0 {
		s.unreadable(w, r, http.StatusRequestEntityTooLarge, fmt.Errorf("request entity is too large; limit is %d bytes", maxReviewBytes))
		return
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/json" {
		s.unreadable(w, r, http.StatusBadRequest, fmt.Errorf("contentType=%s, expected application/json", ct))
		return
	}
	req := admission.Request{}
	gvk, err := s.decode(body, &req.AdmissionRequest)
	if err != nil {
		s.unreadable(w, r, http.StatusBadRequest, err)
		return
	}
	resp := s.wh.Handle(ctx, req)
	code, out := answer(resp.AdmissionResponse)
	review := admissionv1.AdmissionReview{Response: &out}
	if gvk == (schema.GroupVersionKind{}) {
		gvk = admissionv1.SchemeGroupVersion.WithKind("AdmissionReview")
	}
	review.SetGroupVersionKind(gvk)
	write(w, r, code, review)
}

// decode decodes body into req and returns the review's own apiVersion and
// kind, as the universal deserializer does, without its first pass: that
// reads the whole review with encoding/json to learn them, then decodes it
// into req's review, a type the scheme does not register, which it fills
// whatever the review's version (v1beta1 is the same type, answered in
// kind). A JSON review with plain type keys (plainTypeKeys) is decoded
// once the same way, and its apiVersion and kind read from what it
// decoded; anything else, including every review that does not decode,
// goes to the deserializer, which answers it as it always has.
func (s *reviews) decode(body []byte, req *admissionv1.AdmissionRequest) (schema.GroupVersionKind, error) {
	if trimmed := bytes.TrimLeft(body, " \t\r\n"); len(trimmed) > 0 && trimmed[0] == '{' && plainTypeKeys(body) {
		ar := admissionv1.AdmissionReview{Request: req}
		// An apiVersion that is no group/version (two slashes) is the
		// deserializer's to refuse: GroupVersionKind would read it as empty.
		if kjson.UnmarshalCaseSensitivePreserveInts(body, &ar) == nil && validAPIVersion(ar.APIVersion) {
			return ar.GroupVersionKind(), nil
		}
		*req = admissionv1.AdmissionRequest{}
	}
	ar := anyVersionReview{}
	ar.Request = req
	ar.SetGroupVersionKind(admissionv1.SchemeGroupVersion.WithKind("AdmissionReview"))
	_, gvk, err := s.codec.Decode(body, nil, &ar)
	if err != nil {
		return schema.GroupVersionKind{}, err
	}
	if gvk == nil {
		return schema.GroupVersionKind{}, nil
	}
	return *gvk, nil
}

// unreadable answers a request that is not a review it could read.
func (s *reviews) unreadable(w http.ResponseWriter, r *http.Request, code int32, err error) {
	log.FromContext(r.Context()).WithName("admission").Error(err, "unable to read the admission request")
	resp := admission.Errored(code, err)
	status, out := answer(resp.AdmissionResponse)
	write(w, r, status, admissionv1.AdmissionReview{Response: &out})
}

// answer is the one rewrite of an answer, and its HTTP status:
//
//   - no readable request is denied, whatever happened below: controller-
//     runtime answers a panic in the handler, or a patch it cannot encode,
//     with allowed: false, and any denial of a request with a UID becomes
//     an admission with a warning that reveals nothing;
//   - a request that could not be read at all (empty, not an
//     AdmissionReview, over the size limit, no UID) gets its error's HTTP
//     4xx, not a 200 whose body hides the error. The apiserver never sends
//     such requests; a person or a probe poking the endpoint does, and
//     deserves a plain answer. Readable requests get 200 with the verdict
//     inside, which is what the apiserver expects.
func answer(resp admissionv1.AdmissionResponse) (int, admissionv1.AdmissionResponse) {
	switch {
	case resp.UID != "" && !resp.Allowed:
		return http.StatusOK, admissionv1.AdmissionResponse{UID: resp.UID, Allowed: true, Warnings: []string{unhandledWarning}}
	case resp.UID == "" && resp.Result != nil && resp.Result.Code >= 400:
		return int(resp.Result.Code), resp
	}
	return http.StatusOK, resp
}

// write encodes review as controller-runtime does (one JSON document and a
// newline). An answer that cannot be written (the caller has gone) is
// logged; there is no one left to tell.
func write(w http.ResponseWriter, r *http.Request, code int, review admissionv1.AdmissionReview) {
	w.WriteHeader(code)
	if err := json.NewEncoder(w).Encode(review); err != nil {
		log.FromContext(r.Context()).Error(err, "writing the admission answer")
	}
}

// anyVersionReview decodes v1 and v1beta1 reviews alike: a type the scheme
// does not register is filled as it is, whatever the review's version.
type anyVersionReview struct {
	admissionv1.AdmissionReview
}

var _ runtime.Object = &anyVersionReview{}

func (r *anyVersionReview) DeepCopyObject() runtime.Object {
	out := &anyVersionReview{}
	r.AdmissionReview.DeepCopyInto(&out.AdmissionReview)
	return out
}

// validAPIVersion reports whether v parses as a group/version ("" does).
func validAPIVersion(v string) bool {
	_, err := schema.ParseGroupVersion(v)
	return err == nil
}
