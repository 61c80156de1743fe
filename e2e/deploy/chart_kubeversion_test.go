package deploy

import (
	"fmt"
	"testing"

	"github.com/Masterminds/semver/v3"
	"helm.sh/helm/v3/pkg/chart/loader"

	"github.com/confighash/confighash/e2e/controlplane"
)

// TestChartClaimsOnlyTheTestedMinor: Chart.yaml's kubeVersion admits the
// Kubernetes the tests run and no older minor, so the chart never claims
// support for a release nothing here has run.
func TestChartClaimsOnlyTheTestedMinor(t *testing.T) {
	_, p := allRenders(t)
	c, err := loader.Load(p.Chart())
	if err != nil {
		t.Fatal(err)
	}
	claim, err := semver.NewConstraint(c.Metadata.KubeVersion)
	if err != nil {
		t.Fatalf("kubeVersion %q: %v", c.Metadata.KubeVersion, err)
	}
	tested, err := semver.NewVersion(controlplane.KubernetesVersion)
	if err != nil {
		t.Fatal(err)
	}
	if !claim.Check(tested) {
		t.Errorf("kubeVersion %q refuses %s, the Kubernetes the tests run", c.Metadata.KubeVersion, tested)
	}
	older := semver.MustParse(fmt.Sprintf("%d.%d.99", tested.Major(), tested.Minor()-1))
	if claim.Check(older) {
		t.Errorf("kubeVersion %q admits %s, a minor no test runs", c.Metadata.KubeVersion, older)
	}
}
