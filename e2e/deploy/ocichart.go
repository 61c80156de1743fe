package deploy

import (
	"fmt"
	"path/filepath"
	"strings"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/cli"
	"helm.sh/helm/v3/pkg/registry"

	"github.com/confighash/confighash/internal/release"
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
	return release.NewRegistryClient(true, filepath.Join(dir, "registry-config.json"))
}

// PublishChart packages the chart in chartDir into workDir, as `helm
// package` does, and pushes it to the registry at host (host:port, plain
// HTTP) under charts/, as `helm push … oci://host/charts` does: as make
// release does, at the chart's own version.
func PublishChart(chartDir, workDir, host string, client *registry.Client) (OCIChart, error) {
	c, err := release.PushChart(release.Chart{Dir: chartDir, Work: workDir, Remote: "oci://" + host + "/charts", PlainHTTP: true, Client: client})
	if err != nil {
		return OCIChart{}, err
	}
	return OCIChart{Ref: c.Ref, Version: c.Version, Bytes: c.Bytes}, nil
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
