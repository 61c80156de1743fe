package release

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/cli"
	"helm.sh/helm/v3/pkg/registry"
)

// Chart says how to package and push a chart.
type Chart struct {
	// Dir is the chart's directory; Work where the package is written.
	Dir, Work string
	// Remote is the oci:// reference to push under, as `helm push`'s, e.g.
	// oci://ghcr.io/confighash/charts.
	Remote string
	// Version and AppVersion override Chart.yaml's when set, as `helm
	// package --version --app-version` does.
	Version, AppVersion string
	// PlainHTTP speaks HTTP to the registry, for a local one.
	PlainHTTP bool
	Client    *registry.Client
}

// PushedChart is a chart as pushed: its oci:// reference without the
// version, its version (the tag), and the package's size.
type PushedChart struct {
	Ref, Version string
	Bytes        int64
	// Archive is the packaged chart, in Work.
	Archive string
}

// PushChart packages the chart, as `helm package` does, and pushes it as an
// OCI artefact, as `helm push` does, from where `helm install oci://…`
// takes it.
func PushChart(c Chart) (PushedChart, error) {
	pkg := action.NewPackage()
	pkg.Destination = c.Work
	pkg.Version, pkg.AppVersion = c.Version, c.AppVersion
	archive, err := pkg.Run(c.Dir, nil)
	if err != nil {
		return PushedChart{}, fmt.Errorf("helm package %s: %w", c.Dir, err)
	}
	info, err := os.Stat(archive)
	if err != nil {
		return PushedChart{}, fmt.Errorf("reading the packaged chart: %w", err)
	}
	meta, err := loader.Load(archive)
	if err != nil {
		return PushedChart{}, fmt.Errorf("loading %s: %w", archive, err)
	}
	cfg := &action.Configuration{RegistryClient: c.Client}
	push := action.NewPushWithOpts(action.WithPushConfig(cfg), action.WithPlainHTTP(c.PlainHTTP), action.WithPushOptWriter(io.Discard))
	push.Settings = cli.New()
	if _, err := push.Run(archive, c.Remote); err != nil {
		return PushedChart{}, fmt.Errorf("helm push %s %s: %w", filepath.Base(archive), c.Remote, err)
	}
	return PushedChart{Ref: c.Remote + "/" + meta.Metadata.Name, Version: meta.Metadata.Version, Bytes: info.Size(), Archive: archive}, nil
}

// NewRegistryClient is a Helm registry client. With plainHTTP it speaks
// HTTP, as a local registry serves. credentials is its credentials file;
// empty means Helm's own (helm registry login), which falls back to
// Docker's.
func NewRegistryClient(plainHTTP bool, credentials string) (*registry.Client, error) {
	opts := []registry.ClientOption{registry.ClientOptWriter(io.Discard)}
	if plainHTTP {
		opts = append(opts, registry.ClientOptPlainHTTP())
	}
	if credentials != "" {
		opts = append(opts, registry.ClientOptCredentialsFile(credentials))
	}
	c, err := registry.NewClient(opts...)
	if err != nil {
		return nil, fmt.Errorf("creating Helm's registry client: %w", err)
	}
	return c, nil
}

// imageRepository is the default image's repository in the chart's values.
var imageRepository = regexp.MustCompile(`(?m)^(image:\n  repository: ).*$`)

// chartWithImage copies the chart in dir to work/<its name> with its default
// image repository set to repo, so that the released chart installs the
// released image without an override.
func chartWithImage(dir, work, repo string) (string, error) {
	out := filepath.Join(work, filepath.Base(dir))
	if err := os.CopyFS(out, os.DirFS(dir)); err != nil {
		return "", fmt.Errorf("copying the chart: %w", err)
	}
	values := filepath.Join(out, "values.yaml")
	b, err := os.ReadFile(values)
	if err != nil {
		return "", fmt.Errorf("reading the chart's values: %w", err)
	}
	if len(imageRepository.FindAllIndex(b, -1)) != 1 {
		return "", fmt.Errorf("%s: want image.repository as the first line under image: to point it at the released image", values)
	}
	b = imageRepository.ReplaceAll(b, []byte("${1}"+repo))
	if err := os.WriteFile(values, b, 0o644); err != nil {
		return "", fmt.Errorf("writing the chart's values: %w", err)
	}
	return out, nil
}
