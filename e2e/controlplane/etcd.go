//go:build linux

package controlplane

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strconv"
)

// etcdArgs configures a single-member etcd on loopback. The peer URL is set
// explicitly (not left at the default localhost:2380) so that two clusters on
// one machine never collide. --unsafe-no-fsync trades durability, which a
// throwaway test cluster does not need, for much faster writes on slow disks.
func etcdArgs(dir string, clientPort, peerPort int) []string {
	client := "http://127.0.0.1:" + strconv.Itoa(clientPort)
	peer := "http://127.0.0.1:" + strconv.Itoa(peerPort)
	return []string{
		"--name=default",
		"--data-dir=" + filepath.Join(dir, "etcd"),
		"--listen-client-urls=" + client,
		"--advertise-client-urls=" + client,
		"--listen-peer-urls=" + peer,
		"--initial-advertise-peer-urls=" + peer,
		"--initial-cluster=default=" + peer,
		"--unsafe-no-fsync=true",
	}
}

// etcdHealthy reports whether etcd answers /health with {"health":"true"},
// which it does only once it has a leader and can serve requests.
func etcdHealthy(clientPort int) func(context.Context) error {
	url := "http://127.0.0.1:" + strconv.Itoa(clientPort) + "/health"
	return func(ctx context.Context) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return fmt.Errorf("building etcd health request: %w", err)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return fmt.Errorf("querying etcd health: %w", err)
		}
		defer resp.Body.Close()
		var body struct {
			Health string `json:"health"`
			Reason string `json:"reason"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
			return fmt.Errorf("decoding etcd health (HTTP %d): %w", resp.StatusCode, err)
		}
		if resp.StatusCode != http.StatusOK || body.Health != "true" {
			return fmt.Errorf("etcd unhealthy: HTTP %d, health=%q reason=%q", resp.StatusCode, body.Health, body.Reason)
		}
		return nil
	}
}
