//go:build linux

package controlplane

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestReleasesMatchTheirToolsModules: each Kubernetes release's version,
// which the build stamps into what /version reports, is the one its tools
// module builds, and so are the staging modules it replaces (v0.MINOR.PATCH).
// A version named in one place and built from another would let a spec
// believe it ran on a release it did not.
func TestReleasesMatchTheirToolsModules(t *testing.T) {
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	requires := regexp.MustCompile(`(?m)^(?:require)?\s*k8s\.io/kubernetes (\S+)$`)
	replaces := regexp.MustCompile(`(?m)^\s*(k8s\.io/\S+) => k8s\.io/\S+ (\S+)$`)
	for _, r := range kubernetesReleases() {
		mod, err := os.ReadFile(filepath.Join(root, "e2e", "controlplane", "tools", r.tools, "go.mod"))
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, m := range requires.FindAllSubmatch(mod, -1) {
			got = append(got, string(m[1]))
		}
		if len(got) != 1 || got[0] != r.version {
			t.Errorf("tools/%s/go.mod requires k8s.io/kubernetes %v, the release says %s", r.tools, got, r.version)
		}
		staging := "v0." + strings.TrimPrefix(r.version, "v1.")
		for _, m := range replaces.FindAllSubmatch(mod, -1) {
			if string(m[2]) != staging {
				t.Errorf("tools/%s/go.mod replaces %s with %s, want %s for %s", r.tools, m[1], m[2], staging, r.version)
			}
		}
	}
}

func TestFindRelease(t *testing.T) {
	for _, v := range []string{KubernetesVersion, OldestKubernetesVersion} {
		if r, err := findRelease(v); err != nil || r.version != v {
			t.Errorf("findRelease(%s) = %+v, %v", v, r, err)
		}
	}
	if _, err := findRelease("v1.30.0"); err == nil || !strings.Contains(err.Error(), OldestKubernetesVersion) {
		t.Errorf("findRelease of a release not built: %v, want an error naming the ones built", err)
	}
}
