package release

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestCheck: a release needs a tag for a version, a registry and a key,
// and says which is missing or wrong.
func TestCheck(t *testing.T) {
	priv, _, err := GenerateKeyPair(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	good := Options{Version: "v1.2.3", Registry: "ghcr.io/confighash", KeyPath: priv, Root: ".", Dist: "dist", CycloneDX: "cdx"}
	if err := good.Check(); err != nil {
		t.Fatalf("good options: %v", err)
	}
	pre := good
	pre.Version = "v1.2.3-rc.1"
	if err := pre.Check(); err != nil {
		t.Errorf("a pre-release: %v", err)
	}
	for _, c := range []struct {
		name string
		edit func(*Options)
		want string
	}{
		{"no version", func(o *Options) { o.Version = "" }, "no VERSION"},
		{"untagged commit", func(o *Options) { o.Version = "18e1fd7" }, "not a release tag"},
		{"past the tag", func(o *Options) { o.Version = "v1.2.3-4-g18e1fd7" }, "not a release tag"},
		{"uncommitted changes", func(o *Options) { o.Version = "v1.2.3-dirty" }, "not a release tag"},
		{"no v", func(o *Options) { o.Version = "1.2.3" }, "not a release tag"},
		{"build metadata", func(o *Options) { o.Version = "v1.2.3+abc" }, "not a release tag"},
		{"no registry", func(o *Options) { o.Registry = "" }, "no REGISTRY"},
		{"bad registry", func(o *Options) { o.Registry = "Not A Registry" }, "REGISTRY"},
		{"no key", func(o *Options) { o.KeyPath = "" }, "no COSIGN_KEY"},
		{"missing key", func(o *Options) { o.KeyPath = filepath.Join(t.TempDir(), "none") }, "COSIGN_KEY"},
	} {
		o := good
		c.edit(&o)
		if err := o.Check(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error with %q", c.name, err, c.want)
		}
	}
}

// TestLoopback: only a registry on this machine is spoken to in plain HTTP
// without asking.
func TestLoopback(t *testing.T) {
	for reg, want := range map[string]bool{
		"127.0.0.1:5000/x": true, "localhost:5000": true, "[::1]:5000/a/b": true, "localhost": true,
		"ghcr.io/confighash": false, "10.0.0.1:5000/x": false, "localhost.example.com/x": false,
	} {
		if got := Loopback(reg); got != want {
			t.Errorf("Loopback(%q) = %t", reg, got)
		}
	}
}

// TestLoadPrivateKey refuses what cannot sign as cosign does.
func TestLoadPrivateKey(t *testing.T) {
	dir := t.TempDir()
	priv, pub, err := GenerateKeyPair(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := LoadPrivateKey(priv); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadPrivateKey(pub); err == nil {
		t.Error("a public key loaded as a private one")
	}
	if _, _, err := GenerateKeyPair(dir); err == nil || !strings.Contains(err.Error(), "not overwriting") {
		t.Errorf("a second pair in the same place: %v", err)
	}
}
