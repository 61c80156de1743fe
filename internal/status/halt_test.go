package status

import (
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/confighash/confighash/internal/contract"
)

func TestHaltOf(t *testing.T) {
	since := time.Date(2026, 12, 1, 0, 12, 0, 0, time.UTC)
	cm := contract.Change{Source: "configmap/shared", Content: "0123456789abcdef"}
	sec := contract.Change{Source: "secret/db", Content: "fedcba9876543210"}
	tests := map[string]struct {
		annotations  map[string]string
		want         *Halt
		wantErr      string // substring of Halt.Error
		wantInForce  bool
		wantDescribe string
	}{
		"none": {
			annotations:  map[string]string{contract.HoldAnnotation: "x"},
			wantDescribe: "<none>",
		},
		"halted": {
			annotations: map[string]string{contract.HaltAnnotation: sealed(contract.Halt{Since: since, Changes: []contract.Change{cm, sec}, Reason: "CrashLoopBackOff"}.String())},
			want: &Halt{Since: since, Reason: "CrashLoopBackOff",
				Changes: []string{"configmap/shared@0123456789abcdef", "secret/db@fedcba9876543210"}},
			wantInForce:  true,
			wantDescribe: "since 2026-12-01T00:12:00Z, CrashLoopBackOff, for configmap/shared, secret/db",
		},
		"released": {
			annotations:  map[string]string{contract.HaltAnnotation: contract.HaltReleased},
			want:         &Halt{Released: true},
			wantDescribe: "released by hand",
		},
		"not sealed: ignored, as the hook ignores it": {
			annotations:  map[string]string{contract.HaltAnnotation: contract.Halt{Since: since, Changes: []contract.Change{cm}, Reason: "X"}.String()},
			wantErr:      "not sealed by confighash",
			wantDescribe: "ignored: not sealed by confighash",
		},
		"unreadable": {
			annotations:  map[string]string{contract.HaltAnnotation: sealed("v1 since=yesterday changes=configmap/shared@0123456789abcdef reason=X")},
			wantErr:      "since",
			wantDescribe: "ignored: confighash.dev/halt",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := haltOf(tc.annotations, time.Now())
			switch {
			case tc.want == nil && tc.wantErr == "" && got != nil:
				t.Errorf("haltOf = %+v, want nil", got)
			case tc.want != nil && (got == nil || !got.Since.Equal(tc.want.Since) || got.Reason != tc.want.Reason ||
				strings.Join(got.Changes, " ") != strings.Join(tc.want.Changes, " ") || got.Released != tc.want.Released || got.Error != ""):
				t.Errorf("haltOf = %+v, want %+v", got, tc.want)
			case tc.wantErr != "" && (got == nil || !strings.Contains(got.Error, tc.wantErr)):
				t.Errorf("haltOf = %+v, want an error containing %q", got, tc.wantErr)
			}
			if got.InForce() != tc.wantInForce {
				t.Errorf("InForce = %v, want %v", got.InForce(), tc.wantInForce)
			}
			if d := describeHalt(got); !strings.HasPrefix(d, tc.wantDescribe) {
				t.Errorf("describeHalt = %q, want it to start %q", d, tc.wantDescribe)
			}
		})
	}
}

func TestRolloutOf(t *testing.T) {
	since := time.Date(2026, 12, 1, 0, 12, 0, 0, time.UTC)
	now := since.Add(3 * time.Minute)
	cm := contract.Change{Source: "configmap/shared", Content: "0123456789abcdef"}
	if got := rolloutOf(nil); got != nil || describeRollout(got, now) != "<none>" {
		t.Errorf("no annotation: %+v", got)
	}
	got := rolloutOf(map[string]string{contract.RolloutAnnotation: sealed(contract.Rollout{Since: since, Changes: []contract.Change{cm, cm}}.String())})
	if got == nil || !got.Since.Equal(since) || len(got.Changes) != 2 || got.Changes[0] != cm.String() || got.Error != "" {
		t.Fatalf("rolloutOf = %+v", got)
	}
	if d := describeRollout(got, now); d != "2026-12-01T00:12:00Z (3m ago) for configmap/shared (sealed, unverified)" {
		t.Errorf("describeRollout = %q", d)
	}
	bad := rolloutOf(map[string]string{contract.RolloutAnnotation: sealed("v1 since=2026-12-01T00:12:00Z")})
	if bad == nil || !strings.Contains(bad.Error, "changes missing") || !strings.HasPrefix(describeRollout(bad, now), "ignored: ") {
		t.Errorf("unreadable: %+v", bad)
	}
}

func TestHaltIndex(t *testing.T) {
	since := time.Date(2026, 12, 1, 0, 12, 0, 0, time.UTC)
	halt := func(src string) map[string]string {
		return map[string]string{contract.HaltAnnotation: sealed(contract.Halt{Since: since, Reason: "CrashLoopBackOff",
			Changes: []contract.Change{{Source: src, Content: "0123456789abcdef"}}}.String())}
	}
	meta := func(ns, name string, annotations map[string]string) *appsv1.Deployment {
		return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Annotations: annotations}}
	}
	x := newHaltIndex(time.Now())
	x.add("Deployment", meta("shop", "canary", halt("configmap/shared")))
	x.add("StatefulSet", meta("shop", "db", halt("secret/db")))
	x.add("Deployment", meta("other", "canary", halt("configmap/shared")))
	x.add("Deployment", meta("shop", "released", map[string]string{contract.HaltAnnotation: contract.HaltReleased}))
	x.add("Deployment", meta("shop", "garbled", map[string]string{contract.HaltAnnotation: sealed("v1 changes=configmap/shared@zz")}))
	x.add("Deployment", meta("shop", "unsealed", map[string]string{contract.HaltAnnotation: contract.Halt{Since: since, Reason: "X",
		Changes: []contract.Change{{Source: "configmap/shared", Content: "0123456789abcdef"}}}.String()}))
	x.add("Deployment", meta("shop", "plain", nil))

	reader := &Workload{Kind: "Deployment", Namespace: "shop", Name: "web", Sources: []Source{
		{Kind: "Secret", Name: "db"}, {Kind: "ConfigMap", Name: "shared"}, {Kind: "ConfigMap", Name: "unhalted"}}}
	got := x.of(reader)
	if len(got) != 2 || got[0] != (HaltedChange{Source: "configmap/shared", Workload: "deployment/canary", Reason: "CrashLoopBackOff", Since: since}) ||
		got[1].Source != "secret/db" || got[1].Workload != "statefulset/db" {
		t.Errorf("of(web) = %+v, want shared at deployment/canary and db at statefulset/db (this namespace's, in force, only)", got)
	}
	self := &Workload{Kind: "Deployment", Namespace: "shop", Name: "canary", Sources: []Source{{Kind: "ConfigMap", Name: "shared"}}}
	if got := x.of(self); len(got) != 0 {
		t.Errorf("of(canary) = %+v, want none: its own halt is not one it waits for", got)
	}
}
