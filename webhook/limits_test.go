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

	"github.com/prometheus/client_golang/prometheus"
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
			m, err := NewMetrics(prometheus.NewRegistry())
			if err != nil {
				t.Fatal(err)
			}
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
	m, err := NewMetrics(prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	srv := Endpoint(h, Limits{MaxInFlight: limit, QueueWait: 100 * time.Millisecond, Metrics: m})
	review := `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u1",` +
		`"kind":{"group":"apps","version":"v1","kind":"Deployment"},"operation":"CREATE","object":{}}}`
	codes := make([]int, callers)
	var wg sync.WaitGroup
	for i := range callers {
		wg.Go(func() {
			req := httptest.NewRequest(http.MethodPost, Path, strings.NewReader(review))
			req.Header.Set("Content-Type", "application/json")
			rec := httptest.NewRecorder()
			srv.ServeHTTP(rec, req)
			codes[i] = rec.Code
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
