package status

import (
	"context"
	"errors"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/confighash/confighash/workload"
)

const (
	legacyStamp   = "v1:aaaa"
	freshStamp    = "v2:1111111111111111:bbbb"
	otherKeyStamp = "v2:2222222222222222:cccc"
)

// verifyingStamper answers Stamp with a fresh v2 stamp, as the webhook does
// on a dry-run CREATE, and VerifyStored with a fixed verdict.
type verifyingStamper struct {
	verdict  string
	err      error
	verified int
}

func (s *verifyingStamper) Stamp(context.Context, client.Object) (string, []string, error) {
	return freshStamp, nil, nil
}

func (s *verifyingStamper) VerifyStored(context.Context, client.Object) (string, []string, error) {
	s.verified++
	return s.verdict, nil, s.err
}

// TestClassifyStampFormats: status agrees with the hook, which keeps a
// legacy v1 stamp while it matches and a stamp made under another key until
// the content changes.
func TestClassifyStampFormats(t *testing.T) {
	on := Injection{InjectionOn, "namespace x is labelled"}
	forbidden := apierrors.NewForbidden(schema.GroupResource{Group: "apps", Resource: "deployments"}, "web", errors.New("rbac"))
	tests := map[string]struct {
		stored       string
		stamper      *verifyingStamper
		want         State
		wantReason   string // substring
		wantVerified int
	}{
		"legacy v1 stamp the webhook finds current": {
			stored: legacyStamp, stamper: &verifyingStamper{verdict: legacyStamp},
			want: StateCurrent, wantReason: "legacy v1 format) still matches", wantVerified: 1,
		},
		"legacy v1 stamp of older content": {
			stored: legacyStamp, stamper: &verifyingStamper{verdict: freshStamp},
			want: StateStale, wantReason: "differs", wantVerified: 1,
		},
		"legacy v1 stamp, no right to the dry-run update": {
			stored: legacyStamp, stamper: &verifyingStamper{err: forbidden},
			want: StateUnknown, wantReason: "needs a dry-run update", wantVerified: 1,
		},
		"stamp under another key": {
			stored: otherKeyStamp, stamper: &verifyingStamper{},
			want: StateUnknown, wantReason: "stamped under HMAC key 2222222222222222, but confighash now uses key 1111111111111111",
		},
		"current v2 stamp needs no second question": {
			stored: freshStamp, stamper: &verifyingStamper{},
			want: StateCurrent, wantReason: "the stamp is what the sources give now",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "x"}}
			d.Spec.Template.Annotations = map[string]string{workload.ChecksumAnnotation: tc.stored}
			w := &Workload{Injection: on, StampedChecksum: tc.stored}
			stamp(context.Background(), tc.stamper, d, w)
			verifyLegacy(context.Background(), tc.stamper, d, w)
			state, reason := Classify(w)
			if state != tc.want || !strings.Contains(reason, tc.wantReason) {
				t.Errorf("Classify = %s, %q; want %s, containing %q", state, reason, tc.want, tc.wantReason)
			}
			if tc.stamper.verified != tc.wantVerified {
				t.Errorf("VerifyStored called %d times, want %d", tc.stamper.verified, tc.wantVerified)
			}
		})
	}
}
