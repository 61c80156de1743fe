package restamp

import (
	"testing"
	"time"

	"github.com/confighash/confighash/internal/contract"
)

func TestStoredHold(t *testing.T) {
	now := at(time.Minute)
	tests := map[string]struct {
		annotations map[string]string
		want        *contract.Hold
		wantErr     bool
	}{
		"none":       {annotations: map[string]string{"other": "x"}},
		"valid":      {annotations: map[string]string{contract.HoldAnnotation: "v1 since=2030-01-02T03:04:05Z level=2 quiet=4m0s"}, want: &contract.Hold{Since: at(0).Truncate(time.Second), Level: 2, Quiet: 4 * time.Minute}},
		"unreadable": {annotations: map[string]string{contract.HoldAnnotation: "garbage"}, want: &contract.Hold{Since: now.Truncate(time.Second)}, wantErr: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := storedHold(tc.annotations, now)
			if (err != nil) != tc.wantErr {
				t.Errorf("err = %v, want error %v", err, tc.wantErr)
			}
			if (got == nil) != (tc.want == nil) || (got != nil && (!got.Since.Equal(tc.want.Since) || got.Level != tc.want.Level || got.Quiet != tc.want.Quiet)) {
				t.Errorf("storedHold = %+v, want %+v", got, tc.want)
			}
		})
	}
}
