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

// legacyKind says which legacy algorithm Argo CD picks for live: the
// three-way diff when kubectl's last-applied-configuration is there.
func legacyKind(live *unstructured.Unstructured) string {
	if _, ok := live.GetAnnotations()["kubectl.kubernetes.io/last-applied-configuration"]; ok {
		return "three-way"
	}
	return "two-way"
}

// expectation says whether Argo CD should report a diff in one mode, with or
// without the snippet; ok=false when the cell is only measured (the docs
// report it).
type expectation func(m mode, withSnippet bool) (modified, ok bool)

func never(mode, bool) (bool, bool)  { return false, true }
func always(mode, bool) (bool, bool) { return true, true }

// diffRow diffs desired against live in every mode, without and with the
// ignoreDifferences entries, checks each result against want and returns one
// table cell per diff, in the order of diffColumns.
func diffRow(t *testing.T, what string, desired, live *unstructured.Unstructured, ignores []v1alpha1.ResourceIgnoreDifferences, want expectation) []string {
	t.Helper()
	var cells []string
	for _, m := range modes {
		for _, withSnippet := range []bool{false, true} {
			ids := []v1alpha1.ResourceIgnoreDifferences{}
			if withSnippet {
				ids = ignores
			}
			res := argoDiff(t, m, desired, live, ids)
			cells = append(cells, map[bool]string{false: "in sync", true: "**OutOfSync**"}[res.Modified])
			if w, ok := want(m, withSnippet); ok && res.Modified != w {
				t.Errorf("%s, %s diff, snippet=%v: Modified=%v, want %v:\n%s", what, m.name, withSnippet, res.Modified, w, diffText(res))
			}
		}
	}
	return cells
}

// diffColumns heads the cells diffRow returns.
func diffColumns() []string {
	var cols []string
	for _, m := range modes {
		cols = append(cols, m.name, m.name+" + snippet")
	}
	return cols
}

// results collects table rows, in the order run, so the figures in
// docs/argocd.md come straight from a run.
type results struct{ rows [][]string }

func (r *results) add(cells ...string) { r.rows = append(r.rows, cells) }

func (r *results) print(t *testing.T, header ...string) {
	line := func(cells []string) string { return "| " + strings.Join(cells, " | ") + " |" }
	out := []string{line(header), strings.Repeat("|---", len(header)) + "|"}
	for _, row := range r.rows {
		out = append(out, line(row))
	}
	t.Logf("figures for docs/argocd.md:\n%s", strings.Join(out, "\n"))
}

// diffText is what a failing test shows: both sides as Argo CD compared them.
func diffText(res diff.DiffResult) string {
	return fmt.Sprintf("predicted live:\n%s\nlive:\n%s", res.PredictedLive, res.NormalizedLive)
}
