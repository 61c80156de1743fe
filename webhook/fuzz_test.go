package webhook

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"testing"
	"unicode/utf8"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/confighash/confighash/internal/sources"
	"github.com/confighash/confighash/internal/workload"
)

// Bounds the fuzz target holds every answer to.
const (
	// maxPatchBytes: the only patch is one operation setting the stamp.
	maxPatchBytes = 1 << 10
	// maxAnswerBytes: warnings may list up to MaxSources source names.
	maxAnswerBytes = 256 << 10
	// allocPerByte and allocFixed bound what one request may allocate:
	// linear in its size, as decoding is.
	allocPerByte = 64
	allocFixed   = 16 << 20
)

// fuzzCache holds, slimmed as the informer would, small sources and wide
// ones: "wide" at the key bound, and "big" (a ConfigMap and a Secret) of
// 120,000 empty values, which the apiserver accepts. Its Get hands out
// the cached object itself, as the real cache does for the Reader, so the
// memory check measures what a lookup costs, not a copy made for a test.
func fuzzCache(t testing.TB) cachedSources {
	t.Helper()
	keys := func(n int) map[string]string {
		m := make(map[string]string, n)
		for i := range n {
			m[fmt.Sprintf("k%06d", i)] = ""
		}
		return m
	}
	bytesOf := func(in map[string]string) map[string][]byte {
		m := make(map[string][]byte, len(in))
		for k, v := range in {
			m[k] = []byte(v)
		}
		return m
	}
	meta := func(name string) metav1.ObjectMeta { return metav1.ObjectMeta{Name: name, Namespace: "ns"} }
	c := cachedSources{}
	for _, obj := range []client.Object{
		&corev1.ConfigMap{ObjectMeta: meta("cfg"), Data: map[string]string{"a": "1"}},
		&corev1.Secret{ObjectMeta: meta("db"), Data: map[string][]byte{"password": []byte("x")}},
		&corev1.ConfigMap{ObjectMeta: meta("wide"), Data: keys(sources.DefaultMaxKeys)},
		&corev1.Secret{ObjectMeta: meta("wide"), Data: bytesOf(keys(sources.DefaultMaxKeys))},
		&corev1.ConfigMap{ObjectMeta: meta("big"), Data: keys(120000)},
		&corev1.Secret{ObjectMeta: meta("big"), Data: bytesOf(keys(120000))},
	} {
		slim, err := sources.Slim(obj)
		if err != nil {
			t.Fatal(err)
		}
		c[fmt.Sprintf("%T/%s", obj, obj.GetName())] = slim.(client.Object)
	}
	return c
}

// cachedSources is a read-only cache keyed by type and name.
type cachedSources map[string]client.Object

func (c cachedSources) Get(_ context.Context, key client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	held, ok := c[fmt.Sprintf("%T/%s", obj, key.Name)]
	if !ok || key.Namespace != "ns" {
		return apierrors.NewNotFound(schema.GroupResource{}, key.Name)
	}
	switch o := obj.(type) {
	case *corev1.ConfigMap:
		*o = *held.(*corev1.ConfigMap)
	case *corev1.Secret:
		*o = *held.(*corev1.Secret)
	}
	return nil
}

func (c cachedSources) List(context.Context, client.ObjectList, ...client.ListOption) error {
	return errors.New("not listed")
}

// FuzzAdmission sends AdmissionReviews built from random fields and random
// objects (or, with raw, random bytes as the whole body) to the handler and
// through the served endpoint, over a cache holding sources of many keys. No input may panic, deny a request that has a
// UID, patch more than the stamp, or allocate more than linearly in its size. Seeds are in
// testdata/fuzz/FuzzAdmission.
func FuzzAdmission(f *testing.F) {
	kinds := []metav1.GroupVersionKind{{Version: "v1", Kind: "ConfigMap"}}
	for _, k := range workload.Kinds() {
		kinds = append(kinds, metav1.GroupVersionKind(k.GVK))
	}
	ops := []admissionv1.Operation{admissionv1.Create, admissionv1.Update, admissionv1.Delete, admissionv1.Connect}
	h := newHandler(f, nil)
	h.Sources = sources.Reader{Cache: fuzzCache(f)}
	srv := endpoint(&admission.Webhook{Handler: h, RecoverPanic: ptr.To(false)}, Limits{})

	f.Fuzz(func(t *testing.T, raw bool, uid string, kind, op uint8, dryRun bool, object, oldObject []byte) {
		body := object
		if !raw {
			if !utf8.ValidString(uid) {
				return // json.Marshal would alter it; the apiserver sends UUIDs
			}
			req := admissionv1.AdmissionRequest{
				UID:       types.UID(uid),
				Kind:      kinds[int(kind)%len(kinds)],
				Namespace: "ns",
				Operation: ops[int(op)%len(ops)],
				DryRun:    &dryRun,
			}
			if json.Valid(object) {
				req.Object.Raw = object
			}
			if json.Valid(oldObject) {
				req.OldObject.Raw = oldObject
			}
			// The handler itself, not only the endpoint's safety net, must
			// admit every request it can read.
			if uid != "" {
				if resp := h.Handle(context.Background(), admission.Request{AdmissionRequest: req}); !resp.Allowed {
					t.Fatalf("Handle denied a request with a uid: %v", resp.Result)
				}
			}
			var err error
			if body, err = json.Marshal(admissionv1.AdmissionReview{
				TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
				Request:  &req,
			}); err != nil {
				t.Fatal(err)
			}
		}
		hreq := httptest.NewRequest(http.MethodPost, Path, bytes.NewReader(body))
		hreq.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()

		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		srv.ServeHTTP(rec, hreq)
		runtime.ReadMemStats(&after)

		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > uint64(allocFixed+allocPerByte*len(body)) {
			t.Errorf("allocated %d bytes for a %d-byte request", alloc, len(body))
		}
		if rec.Body.Len() > maxAnswerBytes {
			t.Errorf("answer of %d bytes", rec.Body.Len())
		}
		var review admissionv1.AdmissionReview
		readable := rec.Code == http.StatusOK && json.Unmarshal(rec.Body.Bytes(), &review) == nil && review.Response != nil
		if !raw && uid != "" && !readable {
			t.Fatalf("a review with uid %q got HTTP %d: %s", uid, rec.Code, rec.Body)
		}
		if !readable {
			return
		}
		resp := review.Response
		if resp.UID != "" && !resp.Allowed {
			t.Fatalf("denied a request with uid %q: %s", resp.UID, rec.Body)
		}
		if !raw && resp.UID != types.UID(uid) {
			t.Fatalf("answer uid %q, want %q", resp.UID, uid)
		}
		if len(resp.Patch) > maxPatchBytes {
			t.Fatalf("patch of %d bytes: %s", len(resp.Patch), resp.Patch)
		}
		var patch []struct {
			Path string `json:"path"`
		}
		if len(resp.Patch) > 0 {
			if err := json.Unmarshal(resp.Patch, &patch); err != nil {
				t.Fatalf("patch is not JSON: %v", err)
			}
			if len(patch) != 1 {
				t.Fatalf("patch has %d operations, want 1: %s", len(patch), resp.Patch)
			}
		}
	})
}
