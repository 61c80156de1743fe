//go:build linux

package controlplane

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The hosts file is where containerd looks for it (config_path/<host>/) and
// sends pulls to the endpoint, in plain HTTP for an http endpoint.
func TestWriteRegistryHosts(t *testing.T) {
	f := newNodeFiles(t.TempDir())
	if err := writeRegistryHosts(f, "confighash.local", "http://127.0.0.1:5000"); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(f.registryHosts, "confighash.local", "hosts.toml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`server = "http://127.0.0.1:5000"`, `[host."http://127.0.0.1:5000"]`, `capabilities = ["pull", "resolve"]`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("hosts.toml lacks %s:\n%s", want, b)
		}
	}
	for _, bad := range []struct{ host, endpoint string }{
		{"confighash.local", "127.0.0.1:5000"},
		{"confighash.local", "http://127.0.0.1:5000/v2"},
		{"../etc", "http://127.0.0.1:5000"},
		{"", "http://127.0.0.1:5000"},
	} {
		if err := writeRegistryHosts(f, bad.host, bad.endpoint); err == nil {
			t.Errorf("host %q endpoint %q accepted", bad.host, bad.endpoint)
		}
	}
}
