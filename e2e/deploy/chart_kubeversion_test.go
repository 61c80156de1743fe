package deploy

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/Masterminds/semver/v3"
	"helm.sh/helm/v3/pkg/chart/loader"

	"github.com/confighash/confighash/e2e/controlplane"
)

// TestChartClaimsTheTestedRange: Chart.yaml's kubeVersion admits the
// Kubernetes releases the tests run, from the whole of the oldest minor
// (whose subset `make e2e-oldest` runs) to the default one, and no older
// minor, so the chart never claims a release nothing here has run; and the
// README and docs/development.md state that range.
func TestChartClaimsTheTestedRange(t *testing.T) {
	_, p := allRenders(t)
	c, err := loader.Load(p.Chart())
	if err != nil {
		t.Fatal(err)
	}
	claim, err := semver.NewConstraint(c.Metadata.KubeVersion)
	if err != nil {
		t.Fatalf("kubeVersion %q: %v", c.Metadata.KubeVersion, err)
	}
	oldest := semver.MustParse(controlplane.OldestKubernetesVersion)
	for _, v := range []string{controlplane.KubernetesVersion, controlplane.OldestKubernetesVersion, fmt.Sprintf("%d.%d.0", oldest.Major(), oldest.Minor())} {
		if !claim.Check(semver.MustParse(v)) {
			t.Errorf("kubeVersion %q refuses %s, in a minor the tests run", c.Metadata.KubeVersion, v)
		}
	}
	older := semver.MustParse(fmt.Sprintf("%d.%d.99", oldest.Major(), oldest.Minor()-1))
	if claim.Check(older) {
		t.Errorf("kubeVersion %q admits %s, a minor no test runs", c.Metadata.KubeVersion, older)
	}

	latest := semver.MustParse(controlplane.KubernetesVersion)
	stated := fmt.Sprintf("The chart claims Kubernetes %d.%d and later: the tests run v%s, and a subset of them v%s.",
		oldest.Major(), oldest.Minor(), latest, oldest)
	for _, doc := range []string{"README.md", filepath.Join("docs", "development.md")} {
		text, err := os.ReadFile(filepath.Join(p.Root, doc))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(strings.Join(strings.Fields(string(text)), " "), stated) {
			t.Errorf("%s does not say %q", doc, stated)
		}
	}
}
