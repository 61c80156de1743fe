package status

import (
	"strings"
	"testing"
	"time"

	"github.com/confighash/confighash/internal/contract"
)

func TestHoldOf(t *testing.T) {
	since := time.Date(2026, 12, 1, 0, 37, 28, 0, time.UTC)
	tests := map[string]struct {
		annotations  map[string]string
		want         *Hold
		wantErr      string // substring of Hold.Error
		wantDescribe string
	}{
		"not held": {
			annotations:  map[string]string{"other": "x"},
			wantDescribe: "<none>",
		},
		"held": {
			annotations:  map[string]string{contract.HoldAnnotation: sealed(contract.Hold{Since: since, Level: 2, Quiet: 4 * time.Minute}.String())},
			want:         &Hold{Since: since, Level: 2, Quiet: "4m0s"},
			wantDescribe: "since 2026-12-01T00:37:28Z, level 2, released after 4m0s without a change",
		},
		"unreadable": {
			annotations:  map[string]string{contract.HoldAnnotation: sealed("v9 whatever")},
			wantErr:      `want a value starting "v1"`,
			wantDescribe: "ignored: confighash.dev/hold",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := holdOf(tc.annotations, time.Now())
			switch {
			case tc.want == nil && tc.wantErr == "" && got != nil:
				t.Errorf("holdOf = %+v, want nil", got)
			case tc.want != nil && (got == nil || !got.Since.Equal(tc.want.Since) || got.Level != tc.want.Level || got.Quiet != tc.want.Quiet || got.Error != ""):
				t.Errorf("holdOf = %+v, want %+v", got, tc.want)
			case tc.wantErr != "" && (got == nil || !strings.Contains(got.Error, tc.wantErr)):
				t.Errorf("holdOf = %+v, want an error containing %q", got, tc.wantErr)
			}
			if d := describeHold(got); !strings.HasPrefix(d, tc.wantDescribe) {
				t.Errorf("describeHold = %q, want it to start %q", d, tc.wantDescribe)
			}
		})
	}
}
