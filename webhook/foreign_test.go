package webhook

import (
	"context"
	"fmt"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/confighash/confighash/hasher"
	"github.com/confighash/confighash/internal/contract"
	"github.com/confighash/confighash/internal/workload"
)

// copiedV1 is the v1 stamp (a format of releases before v2, which did not
// bind the namespace) of deployment()'s template reading cfg = {k: v} under
// testKey, as LegacyChecksumV1 of 35034ec computed it. It stands for a stamp
// copied from a workload in another namespace whose cfg holds "v".
const copiedV1 = "v1:c71657e48ad208917585923004098886bdc671b59f29e42f6f9b09fc9e30a6ac"

// legacyVerifyAnnotation is the annotation with which `confighash status`
// releases before this one asked about the stored stamp. It means nothing
// now, so it is not in internal/contract; e2e/callerauth_test.go spells it
// once more (another package, which these unit tests do not import).
const legacyVerifyAnnotation = "confighash.dev/verify-stamp"

// verifyMarker sets legacyVerifyAnnotation; the cases below show it changes
// no answer.
func verifyMarker(d *appsv1.Deployment) {
	d.Annotations = map[string]string{legacyVerifyAnnotation: "true"}
}

func optedOut(d *appsv1.Deployment) {
	d.Annotations = map[string]string{contract.InjectionAnnotation: contract.InjectionDisabled}
}

// overSourceLimit makes the template read more sources than are stamped.
func overSourceLimit(d *appsv1.Deployment) {
	c := &d.Spec.Template.Spec.Containers[0]
	for i := range workload.MaxSources + 1 {
		c.EnvFrom = append(c.EnvFrom, corev1.EnvFromSource{ConfigMapRef: &corev1.ConfigMapEnvSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: fmt.Sprintf("cm-%d", i)}}})
	}
}

func dryRun(req admission.Request) admission.Request {
	req.DryRun = ptr.To(true)
	return req
}

// TestVerifyStored: no request makes the webhook compare content with a
// stamp it did not store itself. Whoever POSTs a review to the webhook writes
// the old object too, so "the stored stamp" in a request is whatever the
// caller says it is. The caller here owns a served namespace and puts a guess
// of another namespace's cfg into a same-named ConfigMap; copiedV1 is that
// other namespace's v1 stamp. For every request shape, the answer is the one
// a wrong guess gets: a fresh v2 stamp of what this namespace holds (or, for
// an opted-out workload, no stamp), never the v1 stamp back. Before, a
// dry-run UPDATE with the verify marker and copiedV1 as the old object's
// stamp was answered with copiedV1 ("stored stamp is current") exactly for
// the right guess.
func TestVerifyStored(t *testing.T) {
	cfg := hasher.Source{Kind: hasher.ConfigMap, Name: "cfg"}
	guesses := map[string]fakeSources{
		"right guess": {cfg: {"k": "v"}},
		"wrong guess": {cfg: {"k": "v2"}},
	}
	refs, _ := hasher.References(&deployment().Spec.Template.Spec, nil)
	v2 := func(src fakeSources) string {
		r, err := hasher.Checksum(testKey, "ns", refs, src.Lookup(context.Background(), "ns"))
		if err != nil {
			t.Fatal(err)
		}
		return r.Checksum
	}
	const fresh, none = "fresh", "none"

	tests := map[string]struct {
		req  admission.Request
		want string // fresh: the v2 stamp of the namespace's content; none: no stamp
	}{
		// The request `confighash status` used to send, but as a direct
		// POST: the caller wrote the old object.
		"verify marker, the copied stamp as the old object's": {
			req:  dryRun(request(admissionv1.Update, deployment(verifyMarker, withStamp(copiedV1)), deployment(withStamp(copiedV1)))),
			want: fresh,
		},
		"verify marker, the copied stamp in the object only": {
			req:  dryRun(request(admissionv1.Update, deployment(verifyMarker, withStamp(copiedV1)), deployment())),
			want: fresh,
		},
		"not a dry run: a no-op write keeps no v1 stamp": {
			req:  request(admissionv1.Update, deployment(withStamp(copiedV1)), deployment(withStamp(copiedV1))),
			want: fresh,
		},
		"a stamp-only write to v1 under confighash's manager": {
			req:  byManager(contract.FieldManager, request(admissionv1.Update, deployment(withStamp(copiedV1)), deployment())),
			want: fresh,
		},
		"a dropped v1 stamp is not restored": {
			req:  request(admissionv1.Update, deployment(), deployment(withStamp(copiedV1))),
			want: fresh,
		},
		"a changed stamp is not restored to v1": {
			req:  request(admissionv1.Update, deployment(withStamp("v2:0000000000000000:00")), deployment(withStamp(copiedV1))),
			want: fresh,
		},
		"create": {
			req:  request(admissionv1.Create, deployment(withStamp(copiedV1)), nil),
			want: fresh,
		},
		"a template over the source limit is not stamped, and keeps no v1 stamp": {
			req:  request(admissionv1.Create, deployment(overSourceLimit, withStamp(copiedV1)), nil),
			want: none,
		},
		// Opted back in with no template change: the stamp came in while
		// the webhook did not stamp (opted out, or namespace unlabelled).
		"opted back in, the template unchanged": {
			req:  request(admissionv1.Update, deployment(withStamp(copiedV1)), deployment(optedOut, withStamp(copiedV1))),
			want: fresh,
		},
		// Opted out: confighash stamps nothing, and lets no v1 stamp in.
		"opted out, create": {
			req:  request(admissionv1.Create, deployment(optedOut, withStamp(copiedV1)), nil),
			want: none,
		},
		"opted out, update that sets it": {
			req:  request(admissionv1.Update, deployment(optedOut, withStamp(copiedV1)), deployment(optedOut)),
			want: none,
		},
		"opted out, update that opts out and sets it": {
			req:  request(admissionv1.Update, deployment(optedOut, withStamp(copiedV1)), deployment(withStamp(v2(guesses["wrong guess"])))),
			want: none,
		},
	}
	for name, tc := range tests {
		for guess, src := range guesses {
			t.Run(name+"/"+guess, func(t *testing.T) {
				resp := newHandler(t, src).Handle(context.Background(), tc.req)
				if !resp.Allowed {
					t.Fatalf("denied: %v", resp.Result)
				}
				want := ""
				if tc.want == fresh {
					want = v2(src)
				}
				if got := answeredStamp(t, tc.req, resp); got != want {
					t.Errorf("stamp = %q (%s), want %q", got, resp.Result.Message, want)
				}
			})
		}
	}
}

// TestMissingSourceKeepsNoV1Stamp: a template change with a required source
// missing keeps the previous stamp, unless confighash did not write it.
func TestMissingSourceKeepsNoV1Stamp(t *testing.T) {
	req := request(admissionv1.Update, deployment(withImage("nginx"), withStamp(copiedV1)), deployment(withStamp(copiedV1)))
	resp := newHandler(t, fakeSources{}).Handle(context.Background(), req)
	refs, _ := hasher.References(&deployment().Spec.Template.Spec, nil)
	want, err := hasher.Checksum(testKey, "ns", refs, fakeSources{}.Lookup(context.Background(), "ns"))
	if err != nil {
		t.Fatal(err)
	}
	if got := answeredStamp(t, req, resp); got != want.Checksum {
		t.Errorf("stamp = %q, want the fresh %q", got, want.Checksum)
	}
	if !strings.Contains(strings.Join(resp.Warnings, "\n"), "required sources missing") {
		t.Errorf("warnings %q, want the missing source named", resp.Warnings)
	}
}

// TestOptedOutStoredStampUntouched: an opted-out workload is never touched,
// so a stamp it already holds, of whatever format, stays on a write that
// keeps it; nothing compares it with content.
func TestOptedOutStoredStampUntouched(t *testing.T) {
	src := fakeSources{{Kind: hasher.ConfigMap, Name: "cfg"}: {"k": "v"}}
	for name, stamp := range map[string]string{"v1": copiedV1, "v2": "v2:0000000000000000:00"} {
		t.Run(name, func(t *testing.T) {
			req := request(admissionv1.Update, deployment(optedOut, withStamp(stamp), withImage("nginx")), deployment(optedOut, withStamp(stamp)))
			resp := newHandler(t, src).Handle(context.Background(), req)
			if !resp.Allowed || len(resp.Patches) > 0 {
				t.Errorf("answer = allowed %v, patches %v; want allowed, no patch", resp.Allowed, resp.Patches)
			}
		})
	}
}
