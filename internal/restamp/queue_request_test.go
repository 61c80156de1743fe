package restamp

import (
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/types"
)

func TestRequestString(t *testing.T) {
	tests := map[string]struct {
		r    Request
		want string
	}{
		"deployment": {
			r:    req("web"),
			want: "Deployment ns/web",
		},
		"startup is not shown": {
			r:    Request{KindName: "CronJob", NamespacedName: types.NamespacedName{Namespace: "batch", Name: "nightly"}, Recheck: true},
			want: "CronJob batch/nightly",
		},
		"zero": {
			r:    Request{},
			want: " /",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := tc.r.String(); got != tc.want {
				t.Errorf("String() = %q, want %q", got, tc.want)
			}
			if got := fmt.Sprint(tc.r); got != tc.want {
				t.Errorf("fmt.Sprint = %q, want %q", got, tc.want)
			}
		})
	}
}
