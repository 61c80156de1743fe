package webhook

import (
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/confighash/confighash/internal/sources"
)

// TestSourceNotHeld: a template reading a source the cache does not hold
// (over --max-source-keys, or of a namespace not served when it was
// cached, with no live read left) keeps its stamp, with a warning naming
// the source; it is never stamped as if the source were absent. A stamp of
// a format confighash does not write is not kept: it is no stamp.
func TestSourceNotHeld(t *testing.T) {
	const stored = "v2:0000000000000000:00"
	meta := metav1.ObjectMeta{Name: "cfg", Namespace: "ns"}
	wide := &corev1.ConfigMap{ObjectMeta: meta, Data: map[string]string{"a": "1", "b": "2", "c": "3"}}
	tests := map[string]struct {
		slimmer  sources.Slimmer
		wantWarn string
	}{
		"over the key bound":     {slimmer: sources.Slimmer{MaxKeys: 2}, wantWarn: "configmap/cfg has more keys than the limit of --max-source-keys; not stamped"},
		"not served when cached": {slimmer: sources.Slimmer{Serves: func(string) bool { return false }}, wantWarn: "configmap/cfg is not cached yet"},
		"at the bound: stamped":  {slimmer: sources.Slimmer{MaxKeys: 3}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			slim, err := tc.slimmer.Slim(wide.DeepCopy())
			if err != nil {
				t.Fatal(err)
			}
			h := newHandler(t, nil)
			h.Sources = sources.Reader{Cache: fake.NewClientBuilder().WithObjects(slim.(client.Object)).Build(), MaxKeys: 2}
			for _, old := range []client.Object{nil, deployment(withStamp(stored), withImage("old"))} {
				obj := deployment(withStamp(stored))
				op := admissionv1.Create
				if old != nil {
					op = admissionv1.Update
				}
				req := request(op, obj, old)
				resp := h.Handle(t.Context(), req)
				if !resp.Allowed {
					t.Fatalf("%s denied: %v", op, resp.Result)
				}
				warned := strings.Join(resp.Warnings, "\n")
				if tc.wantWarn == "" {
					if got := answeredStamp(t, req, resp); got == stored || got == "" {
						t.Errorf("%s of a held source: stamp %q, want a fresh one", op, got)
					}
					continue
				}
				if got := answeredStamp(t, req, resp); got != stored {
					t.Errorf("%s: stamp %q, want the template's own kept", op, got)
				}
				// A write carrying a foreign stamp, or none (a manifest
				// that drops it): on UPDATE the stored stamp stays, on
				// CREATE there is none. A foreign stamp is never kept.
				want := ""
				if old != nil {
					want = stored
				}
				for _, carried := range []string{"v1:aaaa", ""} {
					r := request(op, deployment(withStamp(carried)), old)
					if got := answeredStamp(t, r, h.Handle(t.Context(), r)); got != want {
						t.Errorf("%s carrying %q: stamp %q, want %q", op, carried, got, want)
					}
				}
				if !strings.Contains(warned, tc.wantWarn) {
					t.Errorf("%s: warnings %q, want %q", op, warned, tc.wantWarn)
				}
			}
		})
	}
}
