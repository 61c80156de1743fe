package webhook

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/confighash/confighash/hasher"
)

// readsDB adds a required read of Secret db to the template.
func readsDB(d *appsv1.Deployment) {
	c := &d.Spec.Template.Spec.Containers[0]
	c.EnvFrom = append(c.EnvFrom, corev1.EnvFromSource{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "db"}}})
}

// verified is the TLS state of a caller whose certificate the server
// verified, with this common name and DNS names.
func verified(cn string, dns ...string) *tls.ConnectionState {
	leaf := &x509.Certificate{Subject: pkix.Name{CommonName: cn}, DNSNames: dns}
	return &tls.ConnectionState{VerifiedChains: [][]*x509.Certificate{{leaf, {Subject: pkix.Name{CommonName: "ca"}}}}}
}

// postAs sends req through Callers.Endpoint, as the webhook
// server does, from a caller with TLS state cs, and returns the answer.
func postAs(t *testing.T, h *Handler, cs *tls.ConnectionState, req admission.Request) *admissionv1.AdmissionResponse {
	t.Helper()
	rec := httptest.NewRecorder()
	h.Callers.Endpoint(h, Limits{}).ServeHTTP(rec, reviewFrom(t, cs, req))
	var out admissionv1.AdmissionReview
	if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil || out.Response == nil {
		t.Fatalf("HTTP %d %s: %v", rec.Code, rec.Body, err)
	}
	return out.Response
}

// reviewFrom is the HTTP request of an AdmissionReview of req, from a
// caller with TLS state cs.
func reviewFrom(t *testing.T, cs *tls.ConnectionState, req admission.Request) *http.Request {
	t.Helper()
	body, err := json.Marshal(admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
		Request:  &req.AdmissionRequest,
	})
	if err != nil {
		t.Fatal(err)
	}
	hreq := httptest.NewRequest(http.MethodPost, Path, bytes.NewReader(body))
	hreq.Header.Set("Content-Type", "application/json")
	hreq.TLS = cs
	return hreq
}

// TestCallersLimitAnswersToTheAPIServer: with Callers set, only a caller
// whose verified certificate carries an accepted name gets an answer that
// depends on the request. Anyone else, with or without a certificate, gets
// one fixed answer, the same whether Secret db exists or not: neither the
// `required sources missing` warning nor whether an UPDATE keeps its old
// stamp tells them.
func TestCallersLimitAnswersToTheAPIServer(t *testing.T) {
	cfg := hasher.Source{Kind: hasher.ConfigMap, Name: "cfg"}
	db := hasher.Source{Kind: hasher.Secret, Name: "db"}
	worlds := map[string]fakeSources{
		"db exists": {cfg: {"k": "v"}, db: {"p": "hunter2"}},
		"db absent": {cfg: {"k": "v"}},
	}
	const kept = "v2:0000000000000000:00"
	requests := map[string]admission.Request{
		"create": request(admissionv1.Create, deployment(readsDB), nil),
		// A missing required source keeps the old stamp, a present one
		// gets a fresh stamp: an existence test without any warning.
		"update that changes the template": request(admissionv1.Update, deployment(readsDB, withImage("nginx"), withStamp(kept)), deployment(readsDB, withStamp(kept))),
	}
	callers := map[string]struct {
		tls      *tls.ConnectionState
		answered bool
	}{
		"no TLS state":                    {},
		"TLS, no client certificate":      {tls: &tls.ConnectionState{}},
		"a verified certificate, no name": {tls: verified("system:node:n1")},
		"the apiserver, by common name":   {tls: verified("kube-apiserver-webhook-client"), answered: true},
		"the apiserver, by DNS name":      {tls: verified("x", "kube-apiserver-webhook-client"), answered: true},
	}
	for cname, caller := range callers {
		for rname, req := range requests {
			t.Run(cname+"/"+rname, func(t *testing.T) {
				answers := map[string]*admissionv1.AdmissionResponse{}
				for wname, src := range worlds {
					h := newHandler(t, src)
					h.Callers = &Callers{Names: []string{"kube-apiserver-webhook-client"}}
					answers[wname] = postAs(t, h, caller.tls, req)
				}
				exists, absent := answers["db exists"], answers["db absent"]
				named := strings.Contains(strings.Join(absent.Warnings, "\n"), "secret/db")
				if !caller.answered {
					if !absent.Allowed || absent.Patch != nil || absent.Result.Message != unauthenticatedMessage ||
						len(absent.Warnings) != 1 || absent.Warnings[0] != unauthenticatedWarning {
						t.Errorf("answer %+v (warnings %q), want allowed, no patch, the unauthenticated message and warning only", absent, absent.Warnings)
					}
					if !sameAnswer(exists, absent) {
						t.Errorf("answers differ with db present (%+v) and absent (%+v)", exists, absent)
					}
					return
				}
				if !named {
					t.Errorf("warnings %q: the apiserver is told secret/db is missing", absent.Warnings)
				}
				if sameAnswer(exists, absent) {
					t.Error("the apiserver got the same answer with db present and absent")
				}
			})
		}
	}
}

func sameAnswer(a, b *admissionv1.AdmissionResponse) bool {
	return a.Allowed == b.Allowed && bytes.Equal(a.Patch, b.Patch) &&
		strings.Join(a.Warnings, "\n") == strings.Join(b.Warnings, "\n") && a.Result.Message == b.Result.Message
}

// TestCallersAnyVerifiedName: with no Names, any certificate the server
// verified is accepted; without Callers, every caller is answered.
func TestCallersAnyVerifiedName(t *testing.T) {
	src := fakeSources{{Kind: hasher.ConfigMap, Name: "cfg"}: {"k": "v"}}
	req := request(admissionv1.Create, deployment(readsDB), nil)
	for name, tc := range map[string]struct {
		callers  *Callers
		tls      *tls.ConnectionState
		answered bool
	}{
		"no names, a verified certificate": {callers: &Callers{}, tls: verified("anyone"), answered: true},
		"no names, no certificate":         {callers: &Callers{}, tls: &tls.ConnectionState{}},
		"no Callers, no certificate":       {answered: true},
	} {
		t.Run(name, func(t *testing.T) {
			h := newHandler(t, src)
			h.Callers = tc.callers
			resp := postAs(t, h, tc.tls, req)
			if got := resp.Result.Message != unauthenticatedMessage; got != tc.answered {
				t.Errorf("answered = %v (%q), want %v", got, resp.Result.Message, tc.answered)
			}
		})
	}
}

// Callers the server does not accept have a budget of their own: one that
// holds a body open, declared at the whole budget's size, keeps no accepted
// caller from being read and answered. Before, both shared one budget and
// the apiserver's call got 503 once the other had taken it.
func TestCallersOthersHaveTheirOwnBudget(t *testing.T) {
	h := newHandler(t, fakeSources{})
	h.Callers = &Callers{Names: []string{"kube-apiserver-webhook-client"}}
	l := Limits{MaxBodyBytes: 64 << 10, MaxBufferedBytes: 64<<10 + 1, MaxBufferedPerAddress: 64<<10 + 1, ReadTimeout: 2 * time.Second, QueueWait: 200 * time.Millisecond}
	ep := h.Callers.Endpoint(h, l)

	pr, pw := io.Pipe()
	defer pw.Close()
	slow := httptest.NewRequest(http.MethodPost, Path, pr)
	slow.ContentLength = 64 << 10
	slow.Header.Set("Content-Type", "application/json")
	done := make(chan struct{})
	go func() {
		defer close(done)
		ep.ServeHTTP(httptest.NewRecorder(), slow)
	}()
	if _, err := pw.Write([]byte("{")); err != nil { // the body has begun: its room is taken
		t.Fatal(err)
	}

	rec := httptest.NewRecorder()
	ep.ServeHTTP(rec, reviewFrom(t, verified("kube-apiserver-webhook-client"), request(admissionv1.Create, deployment(), nil)))
	if rec.Code != http.StatusOK {
		t.Errorf("the apiserver's call: HTTP %d %s while another caller holds a body, want 200", rec.Code, rec.Body)
	}
	pw.CloseWithError(io.ErrUnexpectedEOF)
	<-done
}
