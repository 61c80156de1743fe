package app

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// registerBuildInfo registers confighash_build_info, 1 with what `confighash
// version` prints as labels, so that a dashboard shows which release each
// replica runs and a rollout of confighash itself shows as a change of
// version.
func registerBuildInfo(reg prometheus.Registerer, v VersionInfo) error {
	g := prometheus.NewGauge(prometheus.GaugeOpts{
		Name:        "confighash_build_info",
		Help:        "1, labelled with the release this binary was built as (version, dev for a build without one), its commit and the Go release that built it (go_version), as confighash version prints them.",
		ConstLabels: prometheus.Labels{"version": v.Version, "commit": v.Commit, "go_version": v.Go},
	})
	g.Set(1)
	if err := reg.Register(g); err != nil {
		return fmt.Errorf("registering the build info metric: %w", err)
	}
	return nil
}
