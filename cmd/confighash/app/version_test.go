package app

import (
	"bytes"
	"context"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
)

func TestVersionInfo(t *testing.T) {
	for _, c := range []struct {
		name   string
		linked string
		commit string
		info   *debug.BuildInfo
		want   VersionInfo
	}{
		{"no build info", "", "", nil, VersionInfo{Version: "dev", Commit: "unknown", Go: "unknown"}},
		{"tagged, clean", "v0.2.0", "fedcba9", &debug.BuildInfo{GoVersion: "go1.26.8", Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "0123abc"}, {Key: "vcs.modified", Value: "false"},
		}}, VersionInfo{Version: "v0.2.0", Commit: "0123abc", Go: "go1.26.8"}},
		{"dirty, no version linked", "", "", &debug.BuildInfo{GoVersion: "go1.26.8", Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "0123abc"}, {Key: "vcs.modified", Value: "true"},
		}}, VersionInfo{Version: "dev", Commit: "0123abc", Dirty: true, Go: "go1.26.8"}},
		{"built outside a repository", "v0.2.0", "", &debug.BuildInfo{GoVersion: "go1.26.8"},
			VersionInfo{Version: "v0.2.0", Commit: "unknown", Go: "go1.26.8"}},
		{"no VCS info, commit linked", "v0.2.0", "fedcba9", &debug.BuildInfo{GoVersion: "go1.26.8"},
			VersionInfo{Version: "v0.2.0", Commit: "fedcba9", Go: "go1.26.8"}},
	} {
		if got := versionInfo(c.linked, c.commit, c.info); got != c.want {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
}

// TestVersionCommand: `confighash version` prints the version, the commit
// and the Go release, one per line.
func TestVersionCommand(t *testing.T) {
	var out, errOut bytes.Buffer
	if err := Run(context.Background(), []string{"version"}, &out, &errOut); err != nil {
		t.Fatalf("version: %v (%s)", err, errOut.String())
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 3 || lines[0] != "confighash dev" || !strings.HasPrefix(lines[1], "commit: ") || lines[2] != "go: "+runtime.Version() {
		t.Errorf("version printed %q", out.String())
	}
	var dirty bytes.Buffer
	if err := printVersion(&dirty, VersionInfo{Version: "v1", Commit: "abc", Dirty: true, Go: "go1"}); err != nil {
		t.Fatal(err)
	}
	if got, want := dirty.String(), "confighash v1\ncommit: abc (modified)\ngo: go1\n"; got != want {
		t.Errorf("printed %q, want %q", got, want)
	}
}
