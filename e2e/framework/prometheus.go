package framework

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/confighash/confighash/e2e/controlplane"
)

// Prometheus is a real Prometheus server (Debian's package, installed on
// first use), run as a child process that dies with the test binary, for
// specs that check what users' Prometheus would see.
type Prometheus struct {
	// URL is its HTTP API, http://127.0.0.1:PORT.
	URL     string
	LogPath string
	proc    child
}

// StartPrometheus runs Prometheus with config (prometheus.yml) in dir,
// keeping its data and log there, and returns once it answers.
func StartPrometheus(ctx context.Context, dir string, config []byte, progress io.Writer) (*Prometheus, error) {
	server, _, err := controlplane.EnsurePrometheus(ctx, progress)
	if err != nil {
		return nil, err
	}
	ports, err := controlplane.FreePorts(1)
	if err != nil {
		return nil, err
	}
	cfg := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(cfg, config, 0o600); err != nil {
		return nil, fmt.Errorf("writing %s: %w", cfg, err)
	}
	p := &Prometheus{URL: "http://127.0.0.1:" + strconv.Itoa(ports[0]), LogPath: filepath.Join(dir, "prometheus.log")}
	p.proc = child{name: "prometheus", logPath: p.LogPath}
	err = p.proc.start(ctx, p.URL+"/-/ready", server, "--config.file="+cfg, "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address=127.0.0.1:"+strconv.Itoa(ports[0]), "--log.level=warn")
	if err != nil {
		return nil, errors.Join(err, p.Stop(context.Background()))
	}
	return p, nil
}

// Stop stops it and returns once it is gone.
func (p *Prometheus) Stop(ctx context.Context) error {
	return p.proc.stop(ctx, 10*time.Second)
}

// Get calls the HTTP API at path (e.g. /api/v1/targets) with query and
// decodes the envelope's data into out.
func (p *Prometheus) Get(ctx context.Context, path string, query url.Values, out any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.URL+path+"?"+query.Encode(), nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("prometheus %s: %w", path, err)
	}
	defer resp.Body.Close()
	var env struct {
		Status string          `json:"status"`
		Error  string          `json:"error"`
		Data   json.RawMessage `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&env); err != nil {
		return fmt.Errorf("prometheus %s: decoding: %w", path, err)
	}
	if env.Status != "success" {
		return fmt.Errorf("prometheus %s %v: %s", path, query, env.Error)
	}
	if err := json.Unmarshal(env.Data, out); err != nil {
		return fmt.Errorf("prometheus %s: decoding data: %w", path, err)
	}
	return nil
}

// Series is how many series an instant query of expr returns now.
func (p *Prometheus) Series(ctx context.Context, expr string) (int, error) {
	var data struct {
		ResultType string            `json:"resultType"`
		Result     []json.RawMessage `json:"result"`
	}
	if err := p.Get(ctx, "/api/v1/query", url.Values{"query": {expr}}, &data); err != nil {
		return 0, err
	}
	if data.ResultType != "vector" {
		return 0, fmt.Errorf("query %q: a %s, want a vector", expr, data.ResultType)
	}
	return len(data.Result), nil
}
