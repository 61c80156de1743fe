package status

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/confighash/confighash/internal/contract"
	"github.com/confighash/confighash/internal/window"
)

func TestClassifyIgnoredSource(t *testing.T) {
	on := Injection{InjectionOn, "namespace x is labelled"}
	cfg := Source{Kind: "ConfigMap", Name: "cfg", Keys: []string{AllKeys}, Presence: Present}
	clock := Source{Kind: "ConfigMap", Name: "clock", Keys: []string{AllKeys}, Presence: Present, Ignored: true}
	tests := map[string]struct {
		w          Workload
		want       State
		wantReason string
	}{
		"stamp differs, a source is ignored": {
			w:    Workload{Injection: on, Sources: []Source{cfg, clock}, StampedChecksum: "v2:k:00", ExpectedChecksum: "v2:k:aa"},
			want: StateCurrent, wantReason: "configmap/clock is ignored",
		},
		"stamp current, a source is ignored": {
			w:    Workload{Injection: on, Sources: []Source{cfg, clock}, StampedChecksum: "v2:k:aa", ExpectedChecksum: "v2:k:aa"},
			want: StateCurrent, wantReason: "what the sources give now",
		},
		"stamp differs, nothing ignored": {
			w:    Workload{Injection: on, Sources: []Source{cfg}, StampedChecksum: "v2:k:00", ExpectedChecksum: "v2:k:aa"},
			want: StateStale,
		},
		"never stamped, a source is ignored": {
			w:    Workload{Injection: on, Sources: []Source{cfg, clock}, ExpectedChecksum: "v2:k:aa"},
			want: StateStale, wantReason: "not stamped",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, reason := Classify(&tc.w, time.Time{}, window.Cluster{})
			if got != tc.want || !strings.Contains(reason, tc.wantReason) {
				t.Errorf("Classify = %s (%q), want %s (containing %q)", got, reason, tc.want, tc.wantReason)
			}
		})
	}
}

// TestPresenceReadsIgnore: the metadata-only read tells an ignored source,
// and the text report shows it as such.
func TestPresenceReadsIgnore(t *testing.T) {
	tests := map[string]struct {
		annotations map[string]string
		want        bool
	}{
		"ignored":          {annotations: map[string]string{contract.IgnoreAnnotation: "true"}, want: true},
		"annotation false": {annotations: map[string]string{contract.IgnoreAnnotation: "false"}},
		"no annotation":    {},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "clock", Namespace: "ns", Annotations: tc.annotations}}
			c := fake.NewClientBuilder().WithObjects([]client.Object{cm}...).Build()
			srcs := []Source{{Kind: "ConfigMap", Name: "clock", Keys: []string{AllKeys}}}
			newPresenceChecker(c).fill(context.Background(), "ns", srcs)
			if srcs[0].Presence != Present || srcs[0].Ignored != tc.want {
				t.Fatalf("source = %+v, want present, ignored %v", srcs[0], tc.want)
			}
			var out bytes.Buffer
			r := &Report{Workloads: []Workload{{Kind: "Deployment", Namespace: "ns", Name: "web", State: StateCurrent, Sources: srcs}}}
			if err := WriteTable(&out, r, TableOptions{Details: true, Now: time.Now()}); err != nil {
				t.Fatal(err)
			}
			if got := strings.Contains(out.String(), "present, ignored"); got != tc.want {
				t.Errorf("text shows ignored: %v, want %v:\n%s", got, tc.want, out.String())
			}
		})
	}
}
