package sources

import (
	"fmt"
	"runtime"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// BenchmarkSlimSecret: the time to slim one small Secret as the cache
// receives it, and the heap its slimmed copy keeps (retained-B/obj, after a
// GC, over 1,000 copies), held and as a placeholder (namespace not served).
func BenchmarkSlimSecret(b *testing.B) {
	for name, s := range map[string]Slimmer{
		"held":        {},
		"placeholder": {Serves: func(string) bool { return false }},
	} {
		kept := retainedSecrets(s, 1000)
		b.Run(name, func(b *testing.B) {
			obj := smallSecret(0)
			for b.Loop() {
				if _, err := s.Slim(obj); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(kept, "retained-B/obj")
		})
	}
}

// smallSecret is a Secret of one key as the apiserver delivers it: every
// string its own allocation.
func smallSecret(i int) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Name: fmt.Sprintf("s-%d", i), Namespace: fmt.Sprintf("tenant-%d-%d", 1234567890, i/35),
			UID: types.UID(fmt.Sprintf("%08d-1111-2222-3333-444444444444", i)), ResourceVersion: fmt.Sprint(100000 + i),
			Annotations: map[string]string{"kubectl.kubernetes.io/last-applied-configuration": fmt.Sprintf(`{"data":{"password":"%d"}}`, i)},
		},
		Type: corev1.SecretType(string([]byte("Opaque"))),
		Data: map[string][]byte{"password": fmt.Appendf(nil, "secret-%d", i)},
	}
}

// retainedSecrets is the heap n slimmed Secrets keep, per Secret; their
// inputs are dropped.
func retainedSecrets(s Slimmer, n int) float64 {
	kept := make([]any, n)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := range kept {
		kept[i], _ = s.Slim(smallSecret(i))
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(kept)
	return float64(after.HeapAlloc-before.HeapAlloc) / float64(n)
}
