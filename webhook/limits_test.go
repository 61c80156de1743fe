package webhook

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

// countingBody counts the bytes the server read of a request body.
type countingBody struct {
	r    io.Reader
	read atomic.Int64
}

func (c *countingBody) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.read.Add(int64(n))
	return n, err
}

func (c *countingBody) Close() error { return nil }

// A body declared larger than the limit is refused unread.
func TestEndpointRefusesOversizedBodyUnread(t *testing.T) {
	tests := map[string]struct {
		size     int64
		wantCode int
		maxRead  int64
	}{
		"over the limit": {size: DefaultMaxBodyBytes + 1, wantCode: http.StatusRequestEntityTooLarge, maxRead: 0},
		"far over":       {size: 64 << 20, wantCode: http.StatusRequestEntityTooLarge, maxRead: 0},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			body := &countingBody{r: io.LimitReader(zeros{}, tc.size)}
			req := httptest.NewRequest(http.MethodPost, Path, body)
			req.ContentLength = tc.size
			req.Header.Set("Content-Type", "application/json")
			rec := httptest.NewRecorder()
			m := testMetrics(t)
			Endpoint(newHandler(t, fakeSources{}), Limits{Metrics: m}).ServeHTTP(rec, req)
			if rec.Code != tc.wantCode {
				t.Errorf("status %d, want %d", rec.Code, tc.wantCode)
			}
			if got := testutil.ToFloat64(m.Refused.WithLabelValues(refusedTooLarge)); got != 1 {
				t.Errorf("refused{too_large} = %v, want 1", got)
			}
			if got := body.read.Load(); got > tc.maxRead {
				t.Errorf("read %d bytes of the body, want at most %d", got, tc.maxRead)
			}
		})
	}
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// blocking holds every request until release is closed, and records the
// most it held at once.
type blocking struct {
	release chan struct{}
	now     atomic.Int32
	most    atomic.Int32
}

func (b *blocking) Handle(context.Context, admission.Request) admission.Response {
	n := b.now.Add(1)
	defer b.now.Add(-1)
	for {
		m := b.most.Load()
		if n <= m || b.most.CompareAndSwap(m, n) {
			break
		}
	}
	<-b.release
	return admission.Allowed("")
}

func TestEndpointBoundsInFlight(t *testing.T) {
	const limit, callers = 2, 6
	h := &blocking{release: make(chan struct{})}
	m := testMetrics(t)
	srv := Endpoint(h, Limits{MaxInFlight: limit, QueueWait: 100 * time.Millisecond, Metrics: m})
	review := `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u1",` +
		`"kind":{"group":"apps","version":"v1","kind":"Deployment"},"operation":"CREATE","object":{}}}`
	codes := make([]int, callers)
	var wg sync.WaitGroup
	for i := range callers {
		wg.Go(func() {
			codes[i] = postReview(srv, []byte(review)).Code
		})
	}
	// Those that found no slot give up after QueueWait; then release.
	time.Sleep(500 * time.Millisecond)
	close(h.release)
	wg.Wait()
	if got := h.most.Load(); got > limit {
		t.Errorf("%d requests handled at once, want at most %d", got, limit)
	}
	turnedAway := 0
	for _, c := range codes {
		if c == http.StatusServiceUnavailable {
			turnedAway++
		}
	}
	if turnedAway != callers-limit {
		t.Errorf("codes %v: want %d turned away with 503", codes, callers-limit)
	}
	if got := testutil.ToFloat64(m.Refused.WithLabelValues(refusedBusy)); got != callers-limit {
		t.Errorf("refused{busy} = %v, want %d", got, callers-limit)
	}
}

// A body that trickles in is cut off at the read timeout instead of holding
// a slot (and its goroutine) for as long as the caller likes.
func TestEndpointTimesOutSlowBody(t *testing.T) {
	const readTimeout = 200 * time.Millisecond
	srv := httptest.NewServer(Endpoint(newHandler(t, fakeSources{}), Limits{ReadTimeout: readTimeout}))
	defer srv.Close()
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// Headers promise 1000 bytes; one arrives.
	fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{", Path)
	start := time.Now()
	if err := conn.SetReadDeadline(start.Add(5 * time.Second)); err != nil {
		t.Fatal(err)
	}
	// The server answers or hangs up; either way the read returns.
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	took := time.Since(start)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("server still waiting for the body after %v", took)
	}
	if resp != nil {
		_ = resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			t.Errorf("a truncated body got 200")
		}
	}
	if took > 2*time.Second {
		t.Errorf("took %v to give up on a stalled body, want about %v", took, readTimeout)
	}
}

// The same over HTTP/2, which the apiserver uses to call webhooks.
func TestEndpointTimesOutSlowBodyHTTP2(t *testing.T) {
	const readTimeout = 200 * time.Millisecond
	srv := httptest.NewUnstartedServer(Endpoint(newHandler(t, fakeSources{}), Limits{ReadTimeout: readTimeout}))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	defer srv.Close()
	body, stall := io.Pipe()
	defer stall.Close()
	go func() { _, _ = stall.Write([]byte("{")) }()
	req, err := http.NewRequest(http.MethodPost, srv.URL+Path, body)
	if err != nil {
		t.Fatal(err)
	}
	req.ContentLength = 1000
	req.Header.Set("Content-Type", "application/json")
	client := srv.Client()
	client.Timeout = 5 * time.Second
	start := time.Now()
	resp, err := client.Do(req)
	took := time.Since(start)
	if err == nil {
		_ = resp.Body.Close()
		if resp.ProtoMajor != 2 {
			t.Fatalf("spoke %s, want HTTP/2", resp.Proto)
		}
		if resp.StatusCode == http.StatusOK {
			t.Errorf("a truncated body got 200")
		}
	}
	if took > 2*time.Second {
		t.Errorf("took %v to give up on a stalled body (%v), want about %v", took, err, readTimeout)
	}
}

// slowCaller connects to addr, sends the headers of a review of 1000 bytes
// and one byte of it, and leaves the rest pending until the test ends.
func slowCaller(t *testing.T, addr string) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{", Path)
}

// entered signals each request that reached the endpoint, headers read.
func entered(next http.Handler) (http.Handler, <-chan struct{}) {
	ch := make(chan struct{}, 64)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ch <- struct{}{}
		next.ServeHTTP(w, r)
	}), ch
}

// A caller whose body trickles in holds no slot: with one slot, and slow
// callers holding connections open mid-body, a whole review is still
// answered. Before, the slot was taken once the headers arrived, the slow
// callers kept it for the read timeout and the review got 503.
func TestEndpointSlowBodyHoldsNoSlot(t *testing.T) {
	const slow = 3
	ep := Endpoint(newHandler(t, fakeSources{}), Limits{MaxInFlight: 1, QueueWait: 200 * time.Millisecond, ReadTimeout: 2 * time.Second})
	h, in := entered(ep)
	srv := httptest.NewServer(h)
	defer srv.Close()
	for range slow {
		slowCaller(t, srv.Listener.Addr().String())
		<-in
	}
	review := `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u1",` +
		`"kind":{"group":"apps","version":"v1","kind":"Deployment"},"operation":"CREATE","object":` + string(mustJSON(deployment())) + `}}`
	resp, err := http.Post(srv.URL+Path, "application/json", strings.NewReader(review))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("status %d with %d slow callers pending, want 200", resp.StatusCode, slow)
	}
}

// Bodies are held within the buffer budget, in the whole server and per
// source address.
func TestEndpointBoundsBufferedBodies(t *testing.T) {
	const bodySize = 100 << 10
	tests := map[string]struct {
		total, perAddress int64
		callers           int
		wantHandled       int
	}{
		// Two bodies fit the whole budget: two are read; the others wait
		// for room until their read timeout.
		"total":       {total: 2*bodySize + 2, perAddress: 10 * bodySize, callers: 5, wantHandled: 2},
		"per address": {total: 10 * bodySize, perAddress: bodySize + 1, callers: 5, wantHandled: 1},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			h := &blocking{release: make(chan struct{})}
			l := Limits{MaxInFlight: 10, MaxBodyBytes: bodySize, ReadTimeout: 300 * time.Millisecond}.withDefaults()
			bufs := newBuffers(tc.total, tc.perAddress)
			srv := l.wrap(newReviews(&admission.Webhook{Handler: h}), newSlots(l.MaxInFlight), bufs)
			review := largeCreate(bodySize)
			codes := make([]int, tc.callers)
			var wg sync.WaitGroup
			for i := range tc.callers {
				wg.Go(func() {
					codes[i] = postReview(srv, review).Code
				})
			}
			// The rest give up after their read timeout; then release.
			time.Sleep(time.Second)
			close(h.release)
			wg.Wait()
			if got := bufs.highWater(); got > tc.total {
				t.Errorf("%d bytes buffered at once, want at most %d", got, tc.total)
			}
			ok := 0
			for _, c := range codes {
				if c == http.StatusOK {
					ok++
				}
			}
			if ok != tc.wantHandled || int(h.most.Load()) != tc.wantHandled {
				t.Errorf("codes %v, %d handled at once: want %d answered", codes, h.most.Load(), tc.wantHandled)
			}
		})
	}
}

// A request waiting for room holds none, so that it cannot keep a body
// that fits from being read.
func TestBuffersWaitHoldingNothing(t *testing.T) {
	bufs := newBuffers(100, 100)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, held, err := bufs.readBody(ctx, "a", strings.NewReader(""), 101); !errors.Is(err, errNoBuffer) || held != 0 {
		t.Fatalf("readBody over the budget: held %d, %v; want 0, errNoBuffer", held, err)
	}
	chunks, held, err := bufs.readBody(t.Context(), "a", strings.NewReader("abc"), 100)
	if err != nil || held != 100 || len(chunks) != 1 || string(chunks[0]) != "abc" {
		t.Fatalf("readBody = %q, %d, %v; want [abc], 100, nil", chunks, held, err)
	}
}

// largeCreate is a CREATE review of about size bytes.
func largeCreate(size int) []byte {
	head := `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u1","namespace":"ns",` +
		`"kind":{"group":"apps","version":"v1","kind":"Deployment"},"operation":"CREATE","object":{"pad":"`
	tail := `"}}}`
	return []byte(head + strings.Repeat("x", max(0, size-len(head)-len(tail))) + tail)
}

// highWater is the most bytes b ever held at once.
func (b *buffers) highWater() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.peak
}
