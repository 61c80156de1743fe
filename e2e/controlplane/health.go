//go:build linux

package controlplane

import (
	"context"
	"crypto/tls"
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// httpHealthy reports whether http://127.0.0.1:port/healthz answers 200
// (kube-proxy serves its health check in plain HTTP).
func httpHealthy(port int) func(context.Context) error {
	return healthz(http.DefaultClient, "http://127.0.0.1:"+strconv.Itoa(port)+"/healthz")
}

// httpsHealthy is httpHealthy for components that serve /healthz only over
// TLS with a self-signed certificate (kube-scheduler). Health is all that
// is asked of them, so the certificate is not verified.
func httpsHealthy(port int) func(context.Context) error {
	c := &http.Client{
		Timeout:   5 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}},
	}
	return healthz(c, "https://127.0.0.1:"+strconv.Itoa(port)+"/healthz")
}

func healthz(c *http.Client, url string) func(context.Context) error {
	return func(ctx context.Context) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return fmt.Errorf("building request for %s: %w", url, err)
		}
		resp, err := c.Do(req)
		if err != nil {
			return fmt.Errorf("GET %s: %w", url, err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("GET %s: HTTP %d", url, resp.StatusCode)
		}
		return nil
	}
}
