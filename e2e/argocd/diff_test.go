package argocd

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/argoproj/argo-cd/gitops-engine/v3/pkg/diff"
	"github.com/argoproj/argo-cd/v3/pkg/apis/application/v1alpha1"
	argodiff "github.com/argoproj/argo-cd/v3/util/argo/diff"
	"github.com/argoproj/argo-cd/v3/util/argo/normalizers"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// snippet is the Deployment entry of docs/argocd.md.
func snippet() []v1alpha1.ResourceIgnoreDifferences {
	return []v1alpha1.ResourceIgnoreDifferences{{
		Group:             "apps",
		Kind:              "Deployment",
		JQPathExpressions: []string{`.spec.template.metadata.annotations."confighash.dev/checksum"`},
	}}
}

func load(t *testing.T, path string) *unstructured.Unstructured {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading %s (run the main module's TestArgoCDLiveObjects first, as make test does): %v", path, err)
	}
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(b, &u.Object); err != nil {
		t.Fatalf("decoding %s: %v", path, err)
	}
	return u
}

// TestStampCausesNoDiff feeds the desired and live Deployments to Argo CD's
// controller diff (StateDiff, which picks the legacy three-way diff when
// last-applied-configuration is present and the two-way diff otherwise),
// with and without the ignoreDifferences snippet. Server-side diff is not
// covered here: it needs Argo CD's kube applier against the apiserver.
func TestStampCausesNoDiff(t *testing.T) {
	dir := os.Getenv("CONFIGHASH_ARGOCD_DIR")
	if dir == "" {
		t.Skip("set CONFIGHASH_ARGOCD_DIR to the objects saved by the main module's TestArgoCDLiveObjects (make test does)")
	}
	var table []string
	for _, mode := range []string{"client-side-apply", "server-side-apply"} {
		desired := load(t, filepath.Join(dir, mode, "desired.json"))
		for _, state := range []string{"stamped", "rolled"} {
			live := load(t, filepath.Join(dir, mode, state+".json"))
			if _, ok, _ := unstructured.NestedString(live.Object, "spec", "template", "metadata", "annotations", "confighash.dev/checksum"); !ok {
				t.Fatalf("%s/%s: live object carries no stamp; nothing is being tested", mode, state)
			}
			for _, withSnippet := range []bool{false, true} {
				name := fmt.Sprintf("%s/%s/snippet=%v", mode, state, withSnippet)
				t.Run(name, func(t *testing.T) {
					ids := []v1alpha1.ResourceIgnoreDifferences{}
					if withSnippet {
						ids = snippet()
					}
					dc, err := argodiff.NewDiffConfigBuilder().
						WithDiffSettings(ids, map[string]v1alpha1.ResourceOverride{}, false, normalizers.IgnoreNormalizerOpts{}).
						WithNoCache().Build()
					if err != nil {
						t.Fatal(err)
					}
					res, err := argodiff.StateDiff(context.Background(), live.DeepCopy(), desired.DeepCopy(), dc)
					if err != nil {
						t.Fatal(err)
					}
					kind := "two-way"
					if _, ok := live.GetAnnotations()["kubectl.kubernetes.io/last-applied-configuration"]; ok {
						kind = "three-way (legacy)"
					}
					table = append(table, fmt.Sprintf("| %s | %s | %s | %v | %v |", mode, state, kind, withSnippet, res.Modified))
					if res.Modified {
						t.Errorf("Argo CD reports the Deployment as modified:\n%s", diffText(res))
					}
				})
			}
		}
	}
	fmt.Printf("\n| sync | live state | diff | ignoreDifferences snippet | Modified |\n|---|---|---|---|---|\n%s\n", strings.Join(table, "\n"))
}

func diffText(res diff.DiffResult) string {
	return fmt.Sprintf("predicted live:\n%s\nlive:\n%s", res.PredictedLive, res.NormalizedLive)
}
