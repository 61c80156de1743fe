//go:build e2e

package e2e

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
)

// TestSlowCallersHoldNoSlot: 64 connections that send an AdmissionReview's
// headers and then trickle its body, a byte a second, must not keep the
// apiserver's calls from being answered. Before, a request took its slot as
// soon as its headers arrived and kept it while the body trickled in, so 8
// such connections kept every slot busy, the apiserver's calls got 503 and
// 100 Deployments created meanwhile were admitted unstamped (and nothing
// re-checks an unstamped CREATE). The trickling callers dial from other
// loopback addresses, as other pods would; every Deployment must be stamped.
func TestSlowCallersHoldNoSlot(t *testing.T) {
	raw := env.Confighash.WebhookURL()
	if raw == "" {
		t.Skip("needs the locally run webhook's port")
	}
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	ns := env.NewNamespace(t, true)
	env.Create(t, configMap(ns, "cfg", map[string]string{"a": "1"}))
	env.Create(t, secret(ns, "sec", map[string]string{"password": "hunter2"}))
	spec := podSpec("cfg", "sec")
	// The sources are cached, so a stamp needs no live read.
	dryRunUntilCached(t, ns, spec)

	const tricklers, deployments, workers = 64, 100, 10
	ctx, stop := context.WithCancel(env.SpecContext(t))
	var wg sync.WaitGroup
	var held atomic.Int32
	for i := range tricklers {
		// Two addresses, so that all 64 stay within the per-address
		// connection bound (32): what keeps the slots free is that a
		// trickling body holds none, not that its connection is refused.
		from := net.IPv4(127, 0, 0, byte(2+i%2))
		wg.Go(func() { trickle(ctx, from, u.Host, u.Path, &held) })
	}
	defer func() { stop(); wg.Wait() }()
	// Let them connect and settle into trickling before the writes start.
	time.Sleep(3 * time.Second)
	t.Logf("%d slow connections open", held.Load())

	start := time.Now()
	_, unstamped := createAtOnce(ctx, t, ns, "d", deployments, workers, spec)
	t.Logf("%d of %d Deployments stamped at create, in %v, with %d slow connections open",
		deployments-len(unstamped), deployments, time.Since(start).Round(time.Millisecond), held.Load())
	if len(unstamped) > 0 {
		t.Errorf("%d of %d Deployments admitted unstamped: %v", len(unstamped), deployments, unstamped)
	}
	// And they are stamped in the store, not only in the answer.
	var d appsv1.Deployment
	d.Namespace, d.Name = ns, "d0"
	if env.StampOf(t, &d) == "" {
		t.Errorf("d0 stored without a stamp")
	}
}

// trickle keeps one slow caller going until ctx ends: it connects from
// from, sends headers promising a 64 KiB review and then one byte a
// second; when the server hangs up, it connects again. held counts the
// connections open at the moment.
func trickle(ctx context.Context, from net.IP, addr, path string, held *atomic.Int32) {
	d := tls.Dialer{
		NetDialer: &net.Dialer{LocalAddr: &net.TCPAddr{IP: from}, Timeout: 2 * time.Second},
		// Plain HTTP/1.1: it offers no ALPN, so the server does not speak h2.
		Config: &tls.Config{InsecureSkipVerify: true},
	}
	for ctx.Err() == nil {
		conn, err := d.DialContext(ctx, "tcp", addr)
		if err != nil {
			select {
			case <-ctx.Done():
			case <-time.After(100 * time.Millisecond):
			}
			continue
		}
		held.Add(1)
		// The server's answer or hang-up ends the write loop below.
		go func() { _, _ = io.Copy(io.Discard, conn); _ = conn.Close() }()
		_, err = fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: 65536\r\n\r\n"+
			`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"slow",`, path, addr)
		for err == nil {
			select {
			case <-ctx.Done():
				err = ctx.Err()
			case <-time.After(time.Second):
				_, err = conn.Write([]byte(" "))
			}
		}
		held.Add(-1)
		_ = conn.Close()
	}
}
