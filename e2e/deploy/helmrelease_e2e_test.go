//go:build e2e

package deploy

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/cli"

	"github.com/confighash/confighash/e2e/framework"
)

// helmRelease is the Helm SDK set up as the helm command is, against the
// cluster, for release ReleaseName in Namespace, with its files in a
// directory of the spec's (the user's own Helm configuration is never
// read).
type helmRelease struct {
	cfg      *action.Configuration
	settings *cli.EnvSettings
}

func newHelm(t *testing.T, env *framework.NodeEnv, dir string) *helmRelease {
	t.Helper()
	settings := cli.New()
	settings.KubeConfig = env.Kubeconfig
	settings.RepositoryCache = filepath.Join(dir, "cache")
	settings.RepositoryConfig = filepath.Join(dir, "repositories.yaml")
	settings.RegistryConfig = filepath.Join(dir, "registry-config.json")
	cfg := new(action.Configuration)
	if err := cfg.Init(settings.RESTClientGetter(), Namespace, "secret", t.Logf); err != nil {
		t.Fatalf("initialising Helm: %v", err)
	}
	return &helmRelease{cfg: cfg, settings: settings}
}

func imageValues(image string) map[string]any {
	repo, tag, _ := strings.Cut(image, ":")
	return map[string]any{"image": map[string]any{"repository": repo, "tag": tag}}
}

// install is `helm install confighash DIR -n confighash-system --wait`.
func (h *helmRelease) install(ctx context.Context, dir, image string) error {
	chrt, err := loader.Load(dir)
	if err != nil {
		return fmt.Errorf("loading %s: %w", dir, err)
	}
	in := action.NewInstall(h.cfg)
	in.ReleaseName, in.Namespace, in.Wait, in.Timeout = ReleaseName, Namespace, true, 3*time.Minute
	_, err = in.RunWithContext(ctx, chrt, imageValues(image))
	return err
}

// upgrade is `helm upgrade confighash DIR -n confighash-system --wait`.
func (h *helmRelease) upgrade(ctx context.Context, dir, image string) error {
	chrt, err := loader.Load(dir)
	if err != nil {
		return fmt.Errorf("loading %s: %w", dir, err)
	}
	up := action.NewUpgrade(h.cfg)
	up.Namespace, up.Wait, up.Timeout = Namespace, true, 3*time.Minute
	_, err = up.RunWithContext(ctx, ReleaseName, chrt, imageValues(image))
	return err
}

// uninstall is `helm uninstall confighash -n confighash-system --wait`.
func (h *helmRelease) uninstall(_ context.Context) error {
	un := action.NewUninstall(h.cfg)
	un.Wait, un.Timeout = true, 2*time.Minute
	_, err := un.Run(ReleaseName)
	return err
}
