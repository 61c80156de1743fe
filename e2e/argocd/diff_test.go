package argocd

import (
	"fmt"
	"strings"
	"testing"

	"github.com/argoproj/argo-cd/gitops-engine/v3/pkg/diff"
	"github.com/argoproj/argo-cd/v3/common"
	"github.com/argoproj/argo-cd/v3/pkg/apis/application/v1alpha1"
	argodiff "github.com/argoproj/argo-cd/v3/util/argo/diff"
	"github.com/argoproj/argo-cd/v3/util/argo/normalizers"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// argoManager is the field manager Argo CD syncs and server-side diffs under.
const argoManager = common.ArgoCDSSAManager

// mode is one way Argo CD's controller can compare desired with live, as
// chosen by an Application's compare options.
type mode struct {
	name string
	// serverSide is ServerSideDiff=true (or ServerSideApply=true).
	serverSide bool
	// includeWebhook is IncludeMutationWebhook=true: server-side diff then
	// keeps what mutating webhooks add instead of reverting it to live.
	includeWebhook bool
}

var modes = []mode{
	{name: "legacy"},
	{name: "server-side", serverSide: true},
	{name: "server-side, IncludeMutationWebhook", serverSide: true, includeWebhook: true},
}

// argoDiff runs Argo CD's controller diff (argodiff.StateDiff, as
// CompareAppState calls it) on one desired/live pair.
func argoDiff(t *testing.T, m mode, desired, live *unstructured.Unstructured, ignores []v1alpha1.ResourceIgnoreDifferences) diff.DiffResult {
	t.Helper()
	b := argodiff.NewDiffConfigBuilder().
		WithDiffSettings(ignores, map[string]v1alpha1.ResourceOverride{}, false, normalizers.IgnoreNormalizerOpts{}).
		WithTracking(common.LabelKeyAppInstance, string(v1alpha1.TrackingMethodAnnotation)).
		WithNoCache().
		WithGVKParser(the.parser).
		WithManager(argoManager).
		WithServerSideDiff(m.serverSide)
	if m.serverSide {
		b = b.WithServerSideDryRunner(diff.NewK8sServerSideDryRunner(the.dryRun))
	}
	if m.includeWebhook {
		b = b.WithIgnoreMutationWebhook(false)
	}
	dc, err := b.Build()
	if err != nil {
		t.Fatalf("building the diff config: %v", err)
	}
	res, err := argodiff.StateDiff(t.Context(), live.DeepCopy(), desired.DeepCopy(), dc)
	if err != nil {
		t.Fatalf("%s diff: %v", m.name, err)
	}
	return res
}

// diffKind says which legacy algorithm Argo CD picks for live: the
// three-way diff when kubectl's last-applied-configuration is there.
func diffKind(m mode, live *unstructured.Unstructured) string {
	if m.serverSide {
		return m.name
	}
	if _, ok := live.GetAnnotations()["kubectl.kubernetes.io/last-applied-configuration"]; ok {
		return "legacy three-way"
	}
	return "legacy two-way"
}

// results collects one row per diff, in the order run, so the figures in
// docs/argocd.md come straight from a run.
type results struct{ rows []string }

func (r *results) add(cells ...any) {
	parts := make([]string, len(cells))
	for i, c := range cells {
		parts[i] = fmt.Sprint(c)
	}
	r.rows = append(r.rows, "| "+strings.Join(parts, " | ")+" |")
}

func (r *results) print(t *testing.T, header ...string) {
	sep := strings.Repeat("|---", len(header)) + "|"
	t.Logf("figures for docs/argocd.md:\n| %s |\n%s\n%s", strings.Join(header, " | "), sep, strings.Join(r.rows, "\n"))
}

// diffText is what a failing test shows: both sides as Argo CD compared them.
func diffText(res diff.DiffResult) string {
	return fmt.Sprintf("predicted live:\n%s\nlive:\n%s", res.PredictedLive, res.NormalizedLive)
}
