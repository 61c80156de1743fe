package workload

import (
	"runtime"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// BenchmarkSlimObject: the time to slim one workload as the cache receives
// it, and the heap its slimmed copy keeps (retained-B/obj, after a GC, over
// 64 copies): for a 1.2 MiB Deployment of bulk, and for the worst case
// (references at MaxReferenceBytes, every kept annotation at its bound).
func BenchmarkSlimObject(b *testing.B) {
	k := kindNamedB(b, "Deployment")
	for name, mk := range map[string]func() client.Object{
		"bulk-1MiB": func() client.Object { return bulky1MiB() },
		"worst":     func() client.Object { return worstCase(bulky1MiB()) },
	} {
		kept := retained(k, mk, 64)
		b.Run(name, func(b *testing.B) {
			obj := mk()
			for b.Loop() {
				k.SlimObject(obj)
			}
			b.ReportMetric(kept, "retained-B/obj")
		})
	}
}

// retained is the heap n slimmed copies keep, per copy; their inputs are
// dropped.
func retained(k Kind, mk func() client.Object, n int) float64 {
	kept := make([]client.Object, n)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := range kept {
		kept[i] = k.SlimObject(mk())
	}
	// Twice: the first GC only moves sync.Pool's buffers (the JSON
	// encoder's, of the 1 MiB input) to its victim cache.
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(kept)
	return float64(after.HeapAlloc-before.HeapAlloc) / float64(n)
}

func kindNamedB(b *testing.B, name string) Kind {
	for _, k := range Kinds() {
		if k.GVK.Kind == name {
			return k
		}
	}
	b.Fatalf("no kind %s", name)
	return Kind{}
}
