package status

import (
	"context"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/confighash/confighash/internal/contract"
	"github.com/confighash/confighash/internal/window"
)

const (
	legacyStamp   = "v1:aaaa"
	freshStamp    = "v2:1111111111111111:bbbb"
	otherKeyStamp = "v2:2222222222222222:cccc"
)

// verifyingStamper answers Stamp with a fresh v2 stamp, as the webhook does
// on a dry-run CREATE. It also answers the question status used to ask about
// a legacy v1 stamp (VerifyStored, a dry-run UPDATE the webhook answered
// with the stored stamp while it matched), with a fixed verdict, and counts
// the calls: nothing may ask it any more, since a webhook that answered it
// compared a stamp the caller could have copied from another namespace.
type verifyingStamper struct {
	verdict  string
	verified int
}

func (s *verifyingStamper) Stamp(context.Context, client.Object) (string, []string, error) {
	return freshStamp, nil, nil
}

func (s *verifyingStamper) VerifyStored(context.Context, client.Object) (string, []string, error) {
	s.verified++
	return s.verdict, nil, nil
}

// TestClassifyStampFormats: status agrees with the hook, which re-stamps a
// legacy v1 stamp whatever the content, and keeps a stamp made under another
// key until the content changes.
func TestClassifyStampFormats(t *testing.T) {
	on := Injection{InjectionOn, "namespace x is labelled"}
	tests := map[string]struct {
		stored     string
		stamper    *verifyingStamper
		want       State
		wantReason string // substring
	}{
		"legacy v1 stamp that an old webhook would call current": {
			stored: legacyStamp, stamper: &verifyingStamper{verdict: legacyStamp},
			want: StateStale, wantReason: "not of the format confighash writes",
		},
		"legacy v1 stamp of older content": {
			stored: legacyStamp, stamper: &verifyingStamper{verdict: freshStamp},
			want: StateStale, wantReason: "rolling the workload once",
		},
		"stamp under another key": {
			stored: otherKeyStamp, stamper: &verifyingStamper{},
			want: StateUnknown, wantReason: "stamped under HMAC key 2222222222222222, but confighash now uses key 1111111111111111",
		},
		"current v2 stamp": {
			stored: freshStamp, stamper: &verifyingStamper{},
			want: StateCurrent, wantReason: "the stamp is what the sources give now",
		},
		"not stamped": {
			stored: "", stamper: &verifyingStamper{},
			want: StateStale, wantReason: "not stamped",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "x"}}
			d.Spec.Template.Annotations = map[string]string{contract.ChecksumAnnotation: tc.stored}
			ws := []Workload{{Injection: on, StampedChecksum: tc.stored}}
			stampAll(context.Background(), Options{Stamper: tc.stamper}, []client.Object{d}, ws)
			state, reason := Classify(&ws[0], time.Time{}, window.Cluster{})
			if state != tc.want || !strings.Contains(reason, tc.wantReason) {
				t.Errorf("Classify = %s, %q; want %s, containing %q", state, reason, tc.want, tc.wantReason)
			}
			if tc.stamper.verified != 0 {
				t.Errorf("the webhook was asked about the stored stamp %d times, want never", tc.stamper.verified)
			}
		})
	}
}
