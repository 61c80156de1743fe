package restamp

import (
	"testing"
	"time"

	"github.com/confighash/confighash/internal/contract"
)

func TestWindowOf(t *testing.T) {
	const def, coalesceMax = time.Second, 10 * time.Second
	tests := map[string]struct {
		annotations map[string]string
		want        time.Duration
		wantErr     bool
	}{
		"no annotation":      {want: def},
		"set":                {annotations: map[string]string{contract.CoalesceWindowAnnotation: "3s"}, want: 3 * time.Second},
		"zero rolls at once": {annotations: map[string]string{contract.CoalesceWindowAnnotation: "0s"}, want: 0},
		"at the cap":         {annotations: map[string]string{contract.CoalesceWindowAnnotation: "10s"}, want: coalesceMax},
		"above the cap":      {annotations: map[string]string{contract.CoalesceWindowAnnotation: "1m"}, want: coalesceMax, wantErr: true},
		"negative":           {annotations: map[string]string{contract.CoalesceWindowAnnotation: "-2s"}, want: def, wantErr: true},
		"not a duration":     {annotations: map[string]string{contract.CoalesceWindowAnnotation: "3"}, want: def, wantErr: true},
		"empty":              {annotations: map[string]string{contract.CoalesceWindowAnnotation: ""}, want: def, wantErr: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := windowOf(tc.annotations, def, coalesceMax)
			if got != tc.want || (err != nil) != tc.wantErr {
				t.Errorf("windowOf = %s, %v; want %s, error %v", got, err, tc.want, tc.wantErr)
			}
		})
	}
}
