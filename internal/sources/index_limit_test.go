package sources

import (
	"fmt"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/confighash/confighash/internal/workload"
)

// The hook indexes only what the webhook stamps: a workload over the source
// limit is stamped by neither, and adds nothing to the index.
func TestReadKeysOfSourceLimit(t *testing.T) {
	reading := func(n int) *appsv1.Deployment {
		d := deploymentReading(nil)
		d.Spec.Template.Spec = corev1.PodSpec{Containers: []corev1.Container{{Name: "c"}}}
		for i := range n {
			d.Spec.Template.Spec.Containers[0].EnvFrom = append(d.Spec.Template.Spec.Containers[0].EnvFrom,
				corev1.EnvFromSource{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: fmt.Sprint("cm-", i)}}})
		}
		return d
	}
	tests := map[string]struct {
		sources int
		want    int
	}{
		"at the limit":   {sources: workload.MaxSources, want: workload.MaxSources},
		"over the limit": {sources: workload.MaxSources + 1, want: 0},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := len(readKeys(t, reading(tc.sources))); got != tc.want {
				t.Errorf("%d index keys, want %d", got, tc.want)
			}
		})
	}
}
