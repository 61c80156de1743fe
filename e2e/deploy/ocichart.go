package deploy

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/cli"
	"helm.sh/helm/v3/pkg/registry"
)

// OCIChart is the chart published as an OCI artifact, the way a release
// publishes it: `helm package`, then `helm push` to a registry, from which
// `helm install oci://…` takes it.
type OCIChart struct {
	// Ref is the chart's oci:// reference, without the version.
	Ref string
	// Version is the chart's version, its tag in the registry.
	Version string
	// Bytes is the size of the packaged chart as pushed.
	Bytes int64
}

// NewOCIRegistryClient is a Helm registry client that speaks plain HTTP, as
// a local registry serves, and keeps its credentials file in dir (there are
// no credentials; the user's own Helm configuration is never read).
func NewOCIRegistryClient(dir string) (*registry.Client, error) {
	c, err := registry.NewClient(
		registry.ClientOptPlainHTTP(),
		registry.ClientOptWriter(io.Discard),
		registry.ClientOptCredentialsFile(filepath.Join(dir, "registry-config.json")),
	)
	if err != nil {
		return nil, fmt.Errorf("creating Helm's registry client: %w", err)
	}
	return c, nil
}

// PublishChart packages the chart in chartDir into workDir, as `helm
// package` does, and pushes it to the registry at host (host:port, plain
// HTTP) under charts/, as `helm push … oci://host/charts` does.
func PublishChart(chartDir, workDir, host string, client *registry.Client) (OCIChart, error) {
	pkg := action.NewPackage()
	pkg.Destination = workDir
	archive, err := pkg.Run(chartDir, nil)
	if err != nil {
		return OCIChart{}, fmt.Errorf("helm package %s: %w", chartDir, err)
	}
	info, err := os.Stat(archive)
	if err != nil {
		return OCIChart{}, fmt.Errorf("reading the packaged chart: %w", err)
	}
	meta, err := loader.Load(archive)
	if err != nil {
		return OCIChart{}, fmt.Errorf("loading %s: %w", archive, err)
	}
	remote := "oci://" + host + "/charts"
	cfg := &action.Configuration{RegistryClient: client}
	push := action.NewPushWithOpts(action.WithPushConfig(cfg), action.WithPlainHTTP(true), action.WithPushOptWriter(io.Discard))
	push.Settings = cli.New()
	if _, err := push.Run(archive, remote); err != nil {
		return OCIChart{}, fmt.Errorf("helm push %s %s: %w", filepath.Base(archive), remote, err)
	}
	return OCIChart{Ref: remote + "/" + meta.Metadata.Name, Version: meta.Metadata.Version, Bytes: info.Size()}, nil
}

// Pull fetches the chart from its registry into settings' repository cache
// and loads it, as `helm install oci://…` does before installing.
// install's registry client must be set; it is told to use plain HTTP.
func (c OCIChart) Pull(install *action.Install, settings *cli.EnvSettings) (*chart.Chart, error) {
	install.PlainHTTP = true
	install.Version = c.Version
	path, err := install.LocateChart(c.Ref, settings)
	if err != nil {
		return nil, fmt.Errorf("locating %s %s: %w", c.Ref, c.Version, err)
	}
	if !strings.HasPrefix(path, settings.RepositoryCache) {
		return nil, fmt.Errorf("%s resolved to %s, not a download into %s", c.Ref, path, settings.RepositoryCache)
	}
	chrt, err := loader.Load(path)
	if err != nil {
		return nil, fmt.Errorf("loading %s: %w", path, err)
	}
	return chrt, nil
}
