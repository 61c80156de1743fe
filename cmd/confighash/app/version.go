package app

import (
	"fmt"
	"io"
	"runtime/debug"
)

// version is the release this binary was built as, and commit its commit,
// set at link time by the Makefile (-ldflags -X ...app.version=$(git
// describe --tags --always --dirty), ...app.commit=$(git rev-parse HEAD)).
// The commit is for builds that carry no VCS build info: the image's (its
// build context has no .git) and -buildvcs=false ones. A link-time string
// has to be a package variable; nothing else writes these.
var version, commit string

// VersionInfo is what `confighash version` prints.
type VersionInfo struct {
	Version string // the release, "dev" when the build set none
	Commit  string // the VCS revision the go command recorded, "unknown" without one
	Dirty   bool   // the work tree had uncommitted changes
	Go      string // the Go release that built the binary
}

// Version returns this binary's VersionInfo.
func Version() VersionInfo {
	info, _ := debug.ReadBuildInfo()
	return versionInfo(version, commit, info)
}

// versionInfo reads the commit and Go release from the build info, the
// commit falling back to the linked one; info is nil when the binary
// carries none.
func versionInfo(linked, linkedCommit string, info *debug.BuildInfo) VersionInfo {
	v := VersionInfo{Version: linked, Commit: linkedCommit, Go: "unknown"}
	if v.Version == "" {
		v.Version = "dev"
	}
	if v.Commit == "" {
		v.Commit = "unknown"
	}
	if info == nil {
		return v
	}
	v.Go = info.GoVersion
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			v.Commit = s.Value
		case "vcs.modified":
			v.Dirty = s.Value == "true"
		}
	}
	return v
}

// printVersion writes v as `confighash version` shows it.
func printVersion(w io.Writer, v VersionInfo) error {
	commit := v.Commit
	if v.Dirty {
		commit += " (modified)"
	}
	_, err := fmt.Fprintf(w, "confighash %s\ncommit: %s\ngo: %s\n", v.Version, commit, v.Go)
	if err != nil {
		return fmt.Errorf("writing the version: %w", err)
	}
	return nil
}
