package framework

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
)

func TestPollReady(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if calls.Add(1) < 3 {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	defer srv.Close()
	ctx := t.Context()

	if err := pollReady(ctx, srv.URL, nil); err != nil || calls.Load() != 3 {
		t.Errorf("ready on the third answer: err %v after %d calls", err, calls.Load())
	}

	exited := make(chan struct{})
	close(exited)
	if err := pollReady(ctx, srv.URL, exited); err != nil {
		t.Errorf("a process that answers 200 is ready, even if its exit is already seen: %v", err)
	}
	down := httptest.NewServer(http.NotFoundHandler())
	defer down.Close()
	if err := pollReady(ctx, down.URL, exited); !errors.Is(err, errExited) {
		t.Errorf("process gone: got %v, want errExited", err)
	}
	short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	if err := pollReady(short, down.URL, make(chan struct{})); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("never ready: got %v, want the deadline", err)
	}
}
