package framework

import (
	"context"
	"errors"
	"net/http"
	"time"
)

// errExited is pollReady's answer when the process ended first.
var errExited = errors.New("exited during start-up")

// pollReady asks url every 200 ms until it answers 200 OK. It gives up with
// errExited when exited is closed (the process is gone, so waiting longer
// only hides why), or with ctx's error.
func pollReady(ctx context.Context, url string, exited <-chan struct{}) error {
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-exited:
			return errExited
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}
