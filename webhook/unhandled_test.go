package webhook

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/confighash/confighash/hasher"
	"github.com/confighash/confighash/internal/workload"
)

// failingSources fails every lookup with an error that names a Secret and
// says it is forbidden: nothing of it may reach the caller.
type failingSources struct{}

func (failingSources) Lookup(context.Context, string) hasher.Lookup {
	return func(s hasher.Source) (hasher.Content, bool, error) {
		return hasher.Content{}, false, errors.New(`secrets "db-password" is forbidden`)
	}
}

func TestHandleNeverDeniesReadable(t *testing.T) {
	deploymentKind := metav1.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}
	garbage := runtime.RawExtension{Raw: []byte(`{"spec":`)}
	tests := map[string]struct {
		src       Lookuper
		req       admission.Request
		wantAllow bool
		wantError float64 // the outcome metric's error count
	}{
		"garbage object": {
			src: fakeSources{},
			req: admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{UID: "u", Kind: deploymentKind,
				Namespace: "ns", Operation: admissionv1.Create, Object: garbage}},
			wantAllow: true, wantError: 1,
		},
		"garbage old object": {
			src: fakeSources{},
			req: admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{UID: "u", Kind: deploymentKind,
				Namespace: "ns", Operation: admissionv1.Update, Object: runtime.RawExtension{Raw: mustJSON(deployment())}, OldObject: garbage}},
			wantAllow: true, wantError: 1,
		},
		"lookup fails": {
			src:       failingSources{},
			req:       request(admissionv1.Create, deployment(), nil),
			wantAllow: true, wantError: 1,
		},
		// No UID: not a review the apiserver sent; the endpoint (answer) makes
		// this an HTTP 400.
		"no uid": {
			src:       fakeSources{},
			req:       admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{Kind: deploymentKind, Operation: admissionv1.Create}},
			wantAllow: false, wantError: 1,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			m := testMetrics(t)
			h := newHandler(t, nil)
			h.Sources, h.Metrics = tc.src, m
			resp := h.Handle(context.Background(), tc.req)
			if resp.Allowed != tc.wantAllow {
				t.Fatalf("allowed = %v, want %v (result %v)", resp.Allowed, tc.wantAllow, resp.Result)
			}
			if len(resp.Patches) > 0 {
				t.Errorf("patched an object it could not handle: %s", mustJSON(resp.Patches))
			}
			for _, w := range resp.Warnings {
				if !workload.IsWarning(w) {
					t.Errorf("warning %q is not marked as confighash's", w)
				}
			}
			if got := testutil.ToFloat64(m.Answers.WithLabelValues(string(answerError))); got != tc.wantError {
				t.Errorf("answers{error} = %v, want %v", got, tc.wantError)
			}
			if !tc.wantAllow {
				return
			}
			said := string(mustJSON(resp.AdmissionResponse))
			for _, secret := range []string{"db-password", "forbidden", "decoding", "unexpected"} {
				if strings.Contains(said, secret) {
					t.Errorf("answer reveals %q: %s", secret, said)
				}
			}
			if len(resp.Warnings) != 1 || resp.Warnings[0] != unhandledWarning {
				t.Errorf("warnings = %q, want only %q", resp.Warnings, unhandledWarning)
			}
		})
	}
}

// panicking stands for any bug below the endpoint.
type panicking struct{}

func (panicking) Handle(context.Context, admission.Request) admission.Response { panic("bug") }

// deniesAlways stands for a handler that returns a denial by mistake.
type deniesAlways struct{}

func (deniesAlways) Handle(context.Context, admission.Request) admission.Response {
	return admission.Errored(http.StatusInternalServerError, errors.New("secret db-password unreadable"))
}

// Controller-runtime answers a panic with allowed: false; the endpoint must
// not, for a review it could read.
func TestEndpointNeverDeniesReadable(t *testing.T) {
	review := `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u1",` +
		`"kind":{"group":"apps","version":"v1","kind":"Deployment"},"operation":"CREATE","object":` + string(mustJSON(deployment())) + `}}`
	tests := map[string]admission.Handler{
		"panic":  panicking{},
		"denial": deniesAlways{},
	}
	for name, h := range tests {
		t.Run(name, func(t *testing.T) {
			rec := postReview(Endpoint(h, Limits{}), []byte(review))
			if rec.Code != http.StatusOK {
				t.Fatalf("status %d, want 200: %s", rec.Code, rec.Body)
			}
			var got admissionv1.AdmissionReview
			if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil || got.Response == nil {
				t.Fatalf("not a review (%v): %s", err, rec.Body)
			}
			if got.Response.UID != "u1" || !got.Response.Allowed {
				t.Errorf("uid %q allowed %v, want u1 allowed: %s", got.Response.UID, got.Response.Allowed, rec.Body)
			}
			if got.APIVersion != "admission.k8s.io/v1" || got.Kind != "AdmissionReview" {
				t.Errorf("review type %s/%s lost", got.APIVersion, got.Kind)
			}
			if strings.Contains(rec.Body.String(), "db-password") || strings.Contains(rec.Body.String(), "panic") {
				t.Errorf("answer reveals the failure: %s", rec.Body)
			}
		})
	}
}
