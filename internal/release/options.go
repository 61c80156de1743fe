package release

import (
	"errors"
	"fmt"
	"net"
	"os"
	"regexp"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
)

// Options say what to release and where.
type Options struct {
	// Version is the release's tag, vX.Y.Z with an optional pre-release
	// (v1.2.3-rc.1): the image's and plugin's tag, the chart's version
	// without its v.
	Version string
	// Commit is the commit the binaries report, for builds without VCS
	// build info.
	Commit string
	// Registry is where everything is pushed: host[:port]/path.
	Registry string
	// KeyPath is the PEM private key the image and SBOM are signed with.
	KeyPath string
	// Root is the repository root; Dist the local output directory.
	Root, Dist string
	// CycloneDX is the cyclonedx-gomod binary that writes the SBOM.
	CycloneDX string
	// DownloadURL is where the krew manifest says the archives are, a
	// prefix to which each archive's file name is appended.
	DownloadURL string
	// PlainHTTP speaks HTTP rather than HTTPS to the registry, for a local
	// one.
	PlainHTTP bool
}

// semver is a release tag: v, then SemVer 2.0 without build metadata (an
// OCI tag cannot hold its +).
var semver = regexp.MustCompile(`^v(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?$`)

// describeSuffix is what git describe adds past a tag: commits since it,
// the commit, uncommitted changes. Such a VERSION names no release.
var describeSuffix = regexp.MustCompile(`(-[0-9]+-g[0-9a-f]+(-dirty)?|-dirty)$`)

// Check refuses options a release cannot be made from, saying what to set.
func (o Options) Check() error {
	var errs []error
	switch {
	case o.Version == "":
		errs = append(errs, errors.New("no VERSION: tag the commit (git tag v1.2.3) or set VERSION=v1.2.3"))
	case !semver.MatchString(o.Version) || describeSuffix.MatchString(o.Version):
		errs = append(errs, fmt.Errorf("VERSION %q is not a release tag vX.Y.Z[-pre]: check out the tagged commit, with no uncommitted changes", o.Version))
	}
	if o.Registry == "" {
		errs = append(errs, errors.New("no REGISTRY: set REGISTRY=host/path, e.g. ghcr.io/confighash"))
	} else if _, err := name.NewRepository(o.Registry + "/confighash"); err != nil {
		errs = append(errs, fmt.Errorf("REGISTRY %q: %w", o.Registry, err))
	}
	if o.KeyPath == "" {
		errs = append(errs, errors.New("no COSIGN_KEY: set COSIGN_KEY to the PEM private key to sign with (make release-key writes a pair)"))
	} else if _, err := os.Stat(o.KeyPath); err != nil {
		errs = append(errs, fmt.Errorf("COSIGN_KEY: %w", err))
	}
	if o.Dist == "" || o.Root == "" {
		errs = append(errs, errors.New("no output directory or repository root"))
	}
	if o.CycloneDX == "" {
		errs = append(errs, errors.New("no cyclonedx-gomod binary to write the SBOM"))
	}
	return errors.Join(errs...)
}

// ChartVersion is the chart's SemVer: the tag without its v.
func (o Options) ChartVersion() string { return strings.TrimPrefix(o.Version, "v") }

// nameOpts are how references into the registry are parsed.
func (o Options) nameOpts() []name.Option {
	if o.PlainHTTP {
		return []name.Option{name.Insecure}
	}
	return nil
}

// Ref is the reference of repository repo in the registry at the version.
func (o Options) Ref(repo string) (name.Tag, error) {
	t, err := name.NewTag(o.Registry+"/"+repo+":"+o.Version, o.nameOpts()...)
	if err != nil {
		return name.Tag{}, fmt.Errorf("reference %s/%s:%s: %w", o.Registry, repo, o.Version, err)
	}
	return t, nil
}

// Loopback is true for a registry on this machine (localhost, 127.0.0.0/8,
// ::1), which is spoken to in plain HTTP.
func Loopback(registry string) bool {
	host, _, _ := strings.Cut(registry, "/")
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}
