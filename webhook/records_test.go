package webhook

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/confighash/confighash/hasher"
	"github.com/confighash/confighash/internal/contract"
)

// answered applies the response's patch to the request's Deployment.
func answered(t *testing.T, req admission.Request, resp admission.Response) *appsv1.Deployment {
	t.Helper()
	d := &appsv1.Deployment{}
	if err := json.Unmarshal(patchedObject(t, req, resp), d); err != nil {
		t.Fatal(err)
	}
	return d
}

// answeredStampAnywhere is the stamp the answer leaves, whatever else its
// patch touches.
func answeredStampAnywhere(t *testing.T, req admission.Request, resp admission.Response) string {
	t.Helper()
	return answered(t, req, resp).Spec.Template.Annotations[contract.ChecksumAnnotation]
}

// TestRecordsKeptFromOtherWriters: an UPDATE by anyone but the hook keeps
// the hook's sealed records as they were, as `kubectl rollout undo`'s
// annotation replacement would otherwise erase a hold or bring back a stale
// one; values that are not the hook's, and halt: released, pass.
func TestRecordsKeptFromOtherWriters(t *testing.T) {
	cfg := hasher.Source{Kind: hasher.ConfigMap, Name: "cfg"}
	src := fakeSources{cfg: {"k": "v"}}
	stamp := stampOf(t, src, deployment())
	s := contract.Subject{Kind: "Deployment", Namespace: "ns", Name: "app", UID: "uid-web"}
	now := time.Now().UTC().Truncate(time.Second)
	holdNow := contract.Hold{Since: now, Level: 1, Quiet: time.Minute}.Sealed(testKey, s)
	holdOld := contract.Hold{Since: now.Add(-time.Hour), Level: 0, Quiet: time.Minute}.Sealed(testKey, s)
	haltOld := contract.Halt{Since: now.Add(-time.Hour), Changes: []contract.Change{{Source: "configmap/cfg", Content: "0123456789abcdef"}}, Reason: "CrashLoopBackOff"}.Sealed(testKey, s)
	otherWorkload := contract.Hold{Since: now, Level: 1, Quiet: time.Minute}.Sealed(testKey, contract.Subject{Kind: "Deployment", Namespace: "ns", Name: "other", UID: "u2"})
	with := func(a map[string]string) func(*appsv1.Deployment) {
		return func(d *appsv1.Deployment) { d.Annotations = a }
	}

	tests := map[string]struct {
		old, new map[string]string
		manager  string
		want     map[string]string
	}{
		"an undo that drops a hold in force keeps it": {
			old:  map[string]string{contract.HoldAnnotation: holdNow, "deployment.kubernetes.io/revision": "3"},
			new:  map[string]string{"deployment.kubernetes.io/revision": "3"},
			want: map[string]string{contract.HoldAnnotation: holdNow, "deployment.kubernetes.io/revision": "3"},
		},
		"an undo that replaces a hold with a stale copy keeps the live one": {
			old: map[string]string{contract.HoldAnnotation: holdNow}, new: map[string]string{contract.HoldAnnotation: holdOld},
			want: map[string]string{contract.HoldAnnotation: holdNow},
		},
		"an undo that brings back a stale halt and hold drops them": {
			old: map[string]string{"a": "b"}, new: map[string]string{"a": "b", contract.HaltAnnotation: haltOld, contract.HoldAnnotation: holdOld},
			want: map[string]string{"a": "b"},
		},
		"released is the user's command": {
			old: map[string]string{contract.HaltAnnotation: haltOld}, new: map[string]string{contract.HaltAnnotation: contract.HaltReleased},
			want: map[string]string{contract.HaltAnnotation: contract.HaltReleased},
		},
		"a stale halt put over released is refused": {
			old: map[string]string{contract.HaltAnnotation: contract.HaltReleased}, new: map[string]string{contract.HaltAnnotation: haltOld},
			want: map[string]string{contract.HaltAnnotation: contract.HaltReleased},
		},
		"values that are not the hook's pass": {
			old: map[string]string{contract.HoldAnnotation: "by hand"}, new: map[string]string{contract.HoldAnnotation: otherWorkload},
			want: map[string]string{contract.HoldAnnotation: otherWorkload},
		},
		"a kubectl replace that drops every annotation keeps the records": {
			old: map[string]string{contract.HoldAnnotation: holdNow}, new: nil,
			want: map[string]string{contract.HoldAnnotation: holdNow},
		},
		"the hook's own write passes": {
			old: map[string]string{contract.HoldAnnotation: holdNow}, new: map[string]string{}, manager: contract.FieldManager,
			want: nil,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			h := newHandler(t, src)
			req := request(admissionv1.Update, deployment(withUID, withStamp(stamp), with(tc.new)), deployment(withUID, withStamp(stamp), with(tc.old)))
			if tc.manager != "" {
				req = byManager(tc.manager, req)
			}
			resp := h.Handle(context.Background(), req)
			got := answered(t, req, resp).Annotations
			if len(got) != len(tc.want) {
				t.Fatalf("annotations %v, want %v", got, tc.want)
			}
			for k, v := range tc.want {
				if got[k] != v {
					t.Errorf("%s = %q, want %q", k, got[k], v)
				}
			}
		})
	}
}
