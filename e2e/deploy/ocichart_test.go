package deploy

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/cli"

	"github.com/confighash/confighash/e2e/images"
)

// TestChartFromOCIRegistry packages the chart, pushes it to an in-process
// registry and pulls it back from its oci:// reference as `helm install
// oci://…` does: what comes back is the chart in charts/confighash, at its
// version. TestHelmChartOnANode installs it from there onto a node.
func TestChartFromOCIRegistry(t *testing.T) {
	paths, err := FindPaths()
	if err != nil {
		t.Fatal(err)
	}
	reg := images.RegistryFor(t)
	dir := t.TempDir()
	client, err := NewOCIRegistryClient(dir)
	if err != nil {
		t.Fatal(err)
	}
	published, err := PublishChart(paths.Chart(), dir, reg.Host(), client)
	if err != nil {
		t.Fatal(err)
	}
	local, err := loader.Load(paths.Chart())
	if err != nil {
		t.Fatal(err)
	}
	if want := "oci://" + reg.Host() + "/charts/" + local.Metadata.Name; published.Ref != want || published.Version != local.Metadata.Version {
		t.Errorf("published as %s:%s, want %s:%s", published.Ref, published.Version, want, local.Metadata.Version)
	}
	tags, err := client.Tags(strings.TrimPrefix(published.Ref, "oci://"))
	if err != nil {
		t.Fatal(err)
	}
	if len(tags) != 1 || tags[0] != local.Metadata.Version {
		t.Errorf("registry tags %v, want [%s]", tags, local.Metadata.Version)
	}
	settings := cli.New()
	settings.RepositoryCache = filepath.Join(dir, "cache")
	install := action.NewInstall(&action.Configuration{RegistryClient: client})
	install.SetRegistryClient(client)
	pulled, err := published.Pull(install, settings)
	if err != nil {
		t.Fatal(err)
	}
	if pulled.Metadata.Name != local.Metadata.Name || pulled.Metadata.Version != local.Metadata.Version {
		t.Errorf("pulled %s-%s", pulled.Metadata.Name, pulled.Metadata.Version)
	}
	if !reflect.DeepEqual(pulled.Values, local.Values) || len(pulled.Templates) != len(local.Templates) {
		t.Errorf("the pulled chart differs from charts/confighash (values equal: %t, %d templates, want %d)",
			reflect.DeepEqual(pulled.Values, local.Values), len(pulled.Templates), len(local.Templates))
	}
}
