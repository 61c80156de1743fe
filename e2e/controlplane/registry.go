//go:build linux

package controlplane

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
)

// MirrorRegistry makes the node's containerd pull images named under host
// (e.g. "confighash.local", the first element of an image reference) from
// endpoint instead, a registry's base URL such as "http://127.0.0.1:5000".
// An http endpoint is spoken to in plain HTTP, as a local registry serves.
// It writes containerd's hosts.toml for host under the node directory;
// containerd reads it at the next pull, so the registry may start after
// the node. A pull that the endpoint cannot serve fails: host itself is
// never asked, and the images' domain resolves nowhere anyway.
func (cp *ControlPlane) MirrorRegistry(host, endpoint string) error {
	if cp.node == nil {
		return errors.New("controlplane: MirrorRegistry needs a cluster started with Options.Node")
	}
	return writeRegistryHosts(*cp.node, host, endpoint)
}

func writeRegistryHosts(f nodeFiles, host, endpoint string) error {
	u, err := url.Parse(endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/") {
		return fmt.Errorf("registry endpoint %q: want http(s)://host[:port]", endpoint)
	}
	if host == "" || filepath.Base(host) != host {
		return fmt.Errorf("registry host %q: want a host name, with a port if any", host)
	}
	dir := filepath.Join(f.registryHosts, host)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("creating %s: %w", dir, err)
	}
	path := filepath.Join(dir, "hosts.toml")
	if err := os.WriteFile(path, []byte(registryHostsTOML(endpoint)), 0o644); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// registryHostsTOML sends every pull and resolve to endpoint. server is the
// endpoint too, so that no fallback to the named host's own https address
// is tried (and reported) when the endpoint fails.
func registryHostsTOML(endpoint string) string {
	return fmt.Sprintf(`server = %q

[host.%q]
  capabilities = ["pull", "resolve"]
`, endpoint, endpoint)
}
