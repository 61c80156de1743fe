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

// setting is one way of telling Argo CD what to ignore: nothing, the
// Application entries of docs/argocd.md, or its argocd-cm.
type setting struct {
	name      string
	ignores   []v1alpha1.ResourceIgnoreDifferences
	overrides map[string]v1alpha1.ResourceOverride
}

func (s setting) ignoresSomething() bool { return len(s.ignores) > 0 || len(s.overrides) > 0 }

var noSetting = setting{}

// withSnippet is the Application form of the documented entries.
func withSnippet(t *testing.T) setting {
	return setting{name: "snippet", ignores: fromDocs(t).application}
}

// argoDiff runs Argo CD's controller diff (argodiff.StateDiff, as
// CompareAppState calls it) on one desired/live pair.
func argoDiff(t *testing.T, m mode, desired, live *unstructured.Unstructured, s setting) diff.DiffResult {
	t.Helper()
	ignores, overrides := s.ignores, s.overrides
	if ignores == nil {
		ignores = []v1alpha1.ResourceIgnoreDifferences{}
	}
	if overrides == nil {
		overrides = map[string]v1alpha1.ResourceOverride{}
	}
	b := argodiff.NewDiffConfigBuilder().
		WithDiffSettings(ignores, overrides, false, normalizers.IgnoreNormalizerOpts{}).
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
// without entries that ignore the stamp; ok=false when the cell is only
// measured (the docs report it).
type expectation func(m mode, ignoring bool) (modified, ok bool)

func never(mode, bool) (bool, bool)  { return false, true }
func always(mode, bool) (bool, bool) { return true, true }

// diffRow diffs desired against live in every mode under every setting,
// checks each result against want and returns one table cell per diff, in
// the order of diffColumns.
func diffRow(t *testing.T, what string, desired, live *unstructured.Unstructured, settings []setting, want expectation) []string {
	t.Helper()
	var cells []string
	for _, m := range modes {
		for _, s := range settings {
			res := argoDiff(t, m, desired, live, s)
			cells = append(cells, map[bool]string{false: "in sync", true: "**OutOfSync**"}[res.Modified])
			if w, ok := want(m, s.ignoresSomething()); ok && res.Modified != w {
				t.Errorf("%s, %s diff, %s: Modified=%v, want %v:\n%s", what, m.name, or(s.name, "no entries"), res.Modified, w, diffText(res))
			}
		}
	}
	return cells
}

// diffColumns heads the cells diffRow returns.
func diffColumns(settings []setting) []string {
	var cols []string
	for _, m := range modes {
		for _, s := range settings {
			if s.name == "" {
				cols = append(cols, m.name)
			} else {
				cols = append(cols, m.name+" + "+s.name)
			}
		}
	}
	return cols
}

func or(s, fallback string) string {
	if s == "" {
		return fallback
	}
	return s
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
