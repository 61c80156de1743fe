//go:build e2e

package e2e

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// laggingKubeconfig starts a proxy in front of the apiserver that holds
// back every byte of the watches of resource (e.g. "configmaps") by delay,
// in order, and passes everything else straight through; and returns a
// kubeconfig that reaches the apiserver through it with the admin's
// credentials. A confighash given that kubeconfig is a real replica whose
// informer for resource lags by delay, as one on a loaded node or behind a
// slow watch does: reads, writes, its lease and its other watches are as
// fast as anyone's. The proxy stops when the spec ends.
func laggingKubeconfig(t *testing.T, resource string, delay time.Duration) string {
	t.Helper()
	upstream, err := url.Parse(env.Config.Host)
	if err != nil {
		t.Fatal(err)
	}
	transport, err := rest.TransportFor(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	proxy := &httputil.ReverseProxy{
		Rewrite:   func(r *httputil.ProxyRequest) { r.SetURL(upstream) },
		Transport: transport,
		// Flush each write at once, so that the delay is the only lag.
		FlushInterval: -1,
		ModifyResponse: func(resp *http.Response) error {
			q := resp.Request.URL.Query()
			if (q.Get("watch") == "true" || q.Get("watch") == "1") && strings.HasSuffix(resp.Request.URL.Path, "/"+resource) {
				resp.Body = newDelayedBody(resp.Body, delay)
			}
			return nil
		},
	}
	srv := httptest.NewServer(proxy)
	t.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
	})

	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["lagging"] = &clientcmdapi.Cluster{Server: srv.URL}
	cfg.AuthInfos["lagging"] = &clientcmdapi.AuthInfo{}
	cfg.Contexts["lagging"] = &clientcmdapi.Context{Cluster: "lagging", AuthInfo: "lagging"}
	cfg.CurrentContext = "lagging"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// delayedBody hands out what src yields, each read delay after it arrived.
type delayedBody struct {
	src    io.ReadCloser
	delay  time.Duration
	chunks chan chunk
	done   chan struct{}
	once   sync.Once
	cur    []byte
	err    error // after cur
}

type chunk struct {
	data []byte
	at   time.Time
	err  error
}

func newDelayedBody(src io.ReadCloser, delay time.Duration) *delayedBody {
	b := &delayedBody{src: src, delay: delay, chunks: make(chan chunk, 1024), done: make(chan struct{})}
	go b.pump()
	return b
}

func (b *delayedBody) pump() {
	for {
		buf := make([]byte, 32<<10)
		n, err := b.src.Read(buf)
		c := chunk{data: buf[:n], at: time.Now(), err: err}
		select {
		case b.chunks <- c:
		case <-b.done:
			return
		}
		if err != nil {
			return
		}
	}
}

func (b *delayedBody) Read(p []byte) (int, error) {
	for len(b.cur) == 0 {
		if b.err != nil {
			return 0, b.err
		}
		var c chunk
		select {
		case c = <-b.chunks:
		case <-b.done:
			return 0, io.ErrClosedPipe
		}
		t := time.NewTimer(time.Until(c.at.Add(b.delay)))
		select {
		case <-t.C:
		case <-b.done:
			t.Stop()
			return 0, io.ErrClosedPipe
		}
		b.cur, b.err = c.data, c.err
	}
	n := copy(p, b.cur)
	b.cur = b.cur[n:]
	return n, nil
}

func (b *delayedBody) Close() error {
	b.once.Do(func() { close(b.done) })
	return b.src.Close()
}
