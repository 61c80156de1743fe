package webhook

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
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

// TestLargeBodyHeapPeak sends 16 concurrent 6.5 MiB UPDATEs through the
// served endpoint and reports the heap peak above the idle heap, for the
// endpoint as served before the limits (all 16 decoded at once) and now.
// It is a measurement, run with CONFIGHASH_MEASURE=1; it asserts only that
// every request was answered 200, or 503 when it found no slot in time.
func TestLargeBodyHeapPeak(t *testing.T) {
	if os.Getenv("CONFIGHASH_MEASURE") == "" {
		t.Skip("measurement; set CONFIGHASH_MEASURE=1")
	}
	const callers, size = 16, 6.5 * (1 << 20)
	body := largeUpdate(size)
	t.Logf("body %.2f MiB", float64(len(body))/(1<<20))
	h := newHandler(t, fakeSources{})
	tests := map[string]http.Handler{
		"before: no limits": WithStatusCodes(&admission.Webhook{Handler: h}),
		"after: Endpoint":   Endpoint(h, Limits{}),
	}
	for _, name := range []string{"before: no limits", "after: Endpoint"} {
		t.Run(name, func(t *testing.T) {
			srv := httptest.NewServer(tests[name])
			defer srv.Close()
			runtime.GC()
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			idle, allocated := ms.HeapAlloc, ms.TotalAlloc
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
			start := time.Now()
			var wg sync.WaitGroup
			var ok, busy atomic.Int32
			for range callers {
				wg.Go(func() {
					resp, err := http.Post(srv.URL+Path, "application/json", bytes.NewReader(body))
					if err != nil {
						t.Error(err)
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
			runtime.ReadMemStats(&ms)
			t.Logf("%d/%d answered 200, %d turned away (503), in %v; heap peak %.0f MiB above idle (%.0f MiB total); %.0f MiB allocated per request",
				ok.Load(), callers, busy.Load(), time.Since(start).Round(time.Millisecond),
				float64(peak.Load()-idle)/(1<<20), float64(peak.Load())/(1<<20), float64(ms.TotalAlloc-allocated)/callers/(1<<20))
			// A 503 is a failed call, which failurePolicy Ignore admits.
			if ok.Load()+busy.Load() != callers {
				t.Errorf("%d of %d requests answered neither 200 nor 503", callers-ok.Load()-busy.Load(), callers)
			}
		})
	}
}
