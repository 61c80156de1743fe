package webhook

import (
	"context"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/confighash/confighash/hasher"
	"github.com/confighash/confighash/workload"
)

func verifyMarker(d *appsv1.Deployment) {
	d.Annotations = map[string]string{workload.VerifyStampAnnotation: "true"}
}

func dryRun(req admission.Request) admission.Request {
	req.DryRun = ptr.To(true)
	return req
}

// TestVerifyStored: `confighash status` asks about the stored stamp with a
// dry-run UPDATE, and gets the stamp the hook would leave, so a legacy v1
// stamp that still matches counts as current there too.
func TestVerifyStored(t *testing.T) {
	cfg := hasher.Source{Kind: hasher.ConfigMap, Name: "cfg"}
	present := fakeSources{cfg: {"k": "v"}}
	changed := fakeSources{cfg: {"k": "v2"}}
	refs, _ := hasher.References(&deployment().Spec.Template.Spec, nil)
	v1 := func(src fakeSources) string {
		r, err := hasher.LegacyChecksumV1(testKey, refs, src.Lookup(context.Background(), "ns"))
		if err != nil {
			t.Fatal(err)
		}
		return r.Checksum
	}
	v2 := func(src fakeSources) string {
		r, err := hasher.Checksum(testKey, "ns", refs, src.Lookup(context.Background(), "ns"))
		if err != nil {
			t.Fatal(err)
		}
		return r.Checksum
	}
	legacy := v1(present)

	tests := map[string]struct {
		src       fakeSources
		req       admission.Request
		wantStamp string
	}{
		"stored legacy stamp still matches: kept": {
			src:       present,
			req:       dryRun(request(admissionv1.Update, deployment(verifyMarker, withStamp(legacy)), deployment(withStamp(legacy)))),
			wantStamp: legacy,
		},
		"stored legacy stamp of older content: the fresh stamp": {
			src:       changed,
			req:       dryRun(request(admissionv1.Update, deployment(verifyMarker, withStamp(legacy)), deployment(withStamp(legacy)))),
			wantStamp: v2(changed),
		},
		"stored v2 stamp of older content: the fresh stamp": {
			src:       changed,
			req:       dryRun(request(admissionv1.Update, deployment(verifyMarker, withStamp(v2(present))), deployment(withStamp(v2(present))))),
			wantStamp: v2(changed),
		},
		"stored v2 stamp, current": {
			src:       present,
			req:       dryRun(request(admissionv1.Update, deployment(verifyMarker, withStamp(v2(present))), deployment(withStamp(v2(present))))),
			wantStamp: v2(present),
		},
		// The caller's stamp is never compared: v1 does not bind the
		// namespace, so that would test a stamp copied from elsewhere.
		"a legacy stamp the request carries is not compared": {
			src:       present,
			req:       dryRun(request(admissionv1.Update, deployment(verifyMarker, withStamp(legacy)), deployment(withStamp(v2(changed))))),
			wantStamp: v2(present),
		},
		"not a dry run: the marker means nothing": {
			src:       changed,
			req:       request(admissionv1.Update, deployment(verifyMarker, withStamp(legacy)), deployment(withStamp(legacy))),
			wantStamp: legacy,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			resp := newHandler(t, tc.src).Handle(context.Background(), tc.req)
			if !resp.Allowed {
				t.Fatalf("denied: %v", resp.Result)
			}
			if got := stampOf(t, tc.req, resp); got != tc.wantStamp {
				t.Errorf("stamp = %q, want %q", got, tc.wantStamp)
			}
		})
	}
}
