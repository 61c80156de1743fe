package webhook

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

// largeUpdate is an UPDATE review of about size bytes: a Deployment whose
// metadata carries half of it, as object and as old object, with a template
// change so the full path runs (two decodes, a checksum).
func largeUpdate(size int) []byte {
	pad := strings.Repeat("x", size/2)
	obj := deployment(withImage("new"), func(d *appsv1.Deployment) { d.Annotations = map[string]string{"pad": pad} })
	old := deployment(func(d *appsv1.Deployment) { d.Annotations = map[string]string{"pad": pad} })
	return []byte(`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u1","namespace":"ns",` +
		`"kind":{"group":"apps","version":"v1","kind":"Deployment"},"operation":"UPDATE","object":` + string(mustJSON(obj)) +
		`,"oldObject":` + string(mustJSON(old)) + `}}`)
}

// BenchmarkLargeBodyHeapPeak sends 16 concurrent 6.5 MiB UPDATEs through
// the served endpoint and reports the heap peak above the idle heap, for
// the endpoint as served before the limits (all 16 decoded at once) and
// now. It is a measurement, so it runs with `make bench`, not `make test`:
// a heap peak depends on the collector's timing and the machine's load, and
// no bound on it holds robustly on a loaded CI machine. The bounds it
// measures are asserted exactly by TestEndpointBoundsInFlight (slots) and
// TestEndpointBoundsBufferedBodies (bytes buffered).
func BenchmarkLargeBodyHeapPeak(b *testing.B) {
	const callers, size = 16, 6.5 * (1 << 20)
	body := largeUpdate(size)
	h := newHandler(b, fakeSources{})
	tests := map[string]http.Handler{
		"before: no limits": newReviews(&admission.Webhook{Handler: h}),
		"after: Endpoint":   Endpoint(h, Limits{}),
	}
	for _, name := range []string{"before: no limits", "after: Endpoint"} {
		b.Run(name, func(b *testing.B) {
			srv := httptest.NewServer(tests[name])
			defer srv.Close()
			var worst uint64
			var ok, busy atomic.Int32
			for b.Loop() {
				runtime.GC()
				var ms runtime.MemStats
				runtime.ReadMemStats(&ms)
				idle := ms.HeapAlloc
				var peak atomic.Uint64
				stop := make(chan struct{})
				sampled := make(chan struct{})
				go func() {
					defer close(sampled)
					var ms runtime.MemStats
					for {
						select {
						case <-stop:
							return
						case <-time.After(time.Millisecond):
						}
						runtime.ReadMemStats(&ms)
						if ms.HeapAlloc > peak.Load() {
							peak.Store(ms.HeapAlloc)
						}
					}
				}()
				var wg sync.WaitGroup
				for range callers {
					wg.Go(func() {
						resp, err := http.Post(srv.URL+Path, "application/json", bytes.NewReader(body))
						if err != nil {
							b.Error(err)
							return
						}
						defer resp.Body.Close()
						switch resp.StatusCode {
						case http.StatusOK:
							ok.Add(1)
						case http.StatusServiceUnavailable:
							busy.Add(1)
						}
					})
				}
				wg.Wait()
				close(stop)
				<-sampled
				if p := peak.Load(); p > idle {
					worst = max(worst, p-idle)
				}
			}
			b.ReportMetric(float64(worst)/(1<<20), "heap-peak-MiB")
			b.ReportMetric(float64(busy.Load())/float64(b.N), "503/op")
			// A 503 is a failed call, which failurePolicy Ignore admits.
			if int(ok.Load()+busy.Load()) != callers*b.N {
				b.Errorf("%d of %d requests answered neither 200 nor 503", callers*b.N-int(ok.Load()+busy.Load()), callers*b.N)
			}
		})
	}
}
