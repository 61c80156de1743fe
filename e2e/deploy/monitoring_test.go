package deploy

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/confighash/confighash/e2e/controlplane"
	"github.com/confighash/confighash/internal/mdtable"
	"github.com/confighash/confighash/webhook"
)

// monitoringDoc holds a runbook per alert.
const monitoringDoc = "docs/monitoring.md"

// RunbookBase is where every alert's runbook_url points, plus #anchor.
const RunbookBase = "https://github.com/confighash/confighash/blob/main/" + monitoringDoc

var monitoringOnce renderCache

func monitoringRenders(t *testing.T) []Render { return monitoringOnce.get(t, RenderMonitoring) }

// rules is a Prometheus rule file.
type rules struct {
	Groups []struct {
		Name  string `json:"name"`
		Rules []rule `json:"rules"`
	} `json:"groups"`
}

type rule struct {
	Alert       string            `json:"alert"`
	Expr        string            `json:"expr"`
	For         string            `json:"for"`
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
}

func (r rules) alerts() []rule {
	var out []rule
	for _, g := range r.Groups {
		for _, a := range g.Rules {
			if a.Alert != "" {
				out = append(out, a)
			}
		}
	}
	return out
}

func chartRules(t *testing.T) rules {
	t.Helper()
	_, p := allRenders(t)
	data, err := os.ReadFile(p.RulesPath())
	if err != nil {
		t.Fatal(err)
	}
	var r rules
	if err := yaml.UnmarshalStrict(data, &r); err != nil {
		t.Fatalf("%s: %v", p.RulesPath(), err)
	}
	if len(r.alerts()) == 0 {
		t.Fatalf("%s has no alerts", p.RulesPath())
	}
	return r
}

// TestMonitoringChartMatchesKustomize: the chart with serviceMonitor and
// prometheusRule enabled and the self-managed overlay with
// components/monitoring render the same objects, so the component's copy
// of the rules is the chart's. The dashboard ConfigMap is the chart's only.
func TestMonitoringChartMatchesKustomize(t *testing.T) {
	rs := monitoringRenders(t)
	k, h := index(t, rs[0].Objects), index(t, rs[1].Objects)
	for _, key := range []string{
		"monitoring.coreos.com/ServiceMonitor " + Namespace + "/confighash", "monitoring.coreos.com/PrometheusRule " + Namespace + "/confighash",
		"ServiceAccount " + Namespace + "/confighash-metrics-scraper", "Secret " + Namespace + "/confighash-metrics-token",
		"rbac.authorization.k8s.io/ClusterRoleBinding -/confighash-metrics-scraper",
	} {
		if k[key] == nil || h[key] == nil {
			t.Fatalf("%s: kustomize has it %v, the chart %v", key, k[key] != nil, h[key] != nil)
		}
	}
	checkScraper(t, rs[0].Objects, Namespace)
	delete(h, "ConfigMap "+Namespace+"/confighash-dashboard")
	sameObjects(t, "component", k, h)
}

// TestAlertsPromtool runs Debian's promtool (installed on first use) on
// the rules as each render holds them: `promtool check rules`, then
// `promtool test rules` with testdata/prometheus-rules-test.yaml, in
// which every alert fires on series that should fire it and stays quiet
// on series that should not (TestAlertsAreTested).
func TestAlertsPromtool(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	_, promtool, err := controlplane.EnsurePrometheus(ctx, os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	tests, err := os.ReadFile(RulesTestFile)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range monitoringRenders(t) {
		t.Run(r.Name, func(t *testing.T) {
			data, err := RuleFile(r.Objects)
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "rules.yaml"), data, 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "tests.yaml"), tests, 0o600); err != nil {
				t.Fatal(err)
			}
			for _, args := range [][]string{{"check", "rules", "rules.yaml"}, {"test", "rules", "tests.yaml"}} {
				cmd := exec.CommandContext(ctx, promtool, args...)
				cmd.Dir = dir
				out, err := cmd.CombinedOutput()
				if err != nil {
					t.Errorf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
					continue
				}
				t.Logf("promtool %s:\n%s", strings.Join(args, " "), bytes.TrimSpace(out))
			}
		})
	}
}

// promtoolTests is the part of a promtool test file that says which alert
// is expected when.
type promtoolTests struct {
	RuleFiles []string `json:"rule_files"`
	Tests     []struct {
		Name      string `json:"name"`
		AlertTest []struct {
			EvalTime  string           `json:"eval_time"`
			AlertName string           `json:"alertname"`
			ExpAlerts []map[string]any `json:"exp_alerts"`
		} `json:"alert_rule_test"`
	} `json:"tests"`
}

// TestAlertsAreTested: the promtool tests expect every alert of the rules
// to fire at some time and to stay quiet at another, and name no alert the
// rules lack.
func TestAlertsAreTested(t *testing.T) {
	data, err := os.ReadFile(RulesTestFile)
	if err != nil {
		t.Fatal(err)
	}
	var pt promtoolTests
	if err := yaml.Unmarshal(data, &pt); err != nil {
		t.Fatalf("%s: %v", RulesTestFile, err)
	}
	fires, quiet := map[string]int{}, map[string]int{}
	for _, tc := range pt.Tests {
		for _, a := range tc.AlertTest {
			if len(a.ExpAlerts) > 0 {
				fires[a.AlertName]++
			} else {
				quiet[a.AlertName]++
			}
		}
	}
	alerts := map[string]bool{}
	for _, a := range chartRules(t).alerts() {
		alerts[a.Alert] = true
		if fires[a.Alert] == 0 {
			t.Errorf("%s: no promtool test expects %s to fire", RulesTestFile, a.Alert)
		}
		if quiet[a.Alert] == 0 {
			t.Errorf("%s: no promtool test expects %s to stay quiet", RulesTestFile, a.Alert)
		}
	}
	for name := range fires {
		if !alerts[name] {
			t.Errorf("%s tests %s, which is not an alert", RulesTestFile, name)
		}
	}
	for name := range quiet {
		if !alerts[name] {
			t.Errorf("%s tests %s, which is not an alert", RulesTestFile, name)
		}
	}
}

// runbookSections are the "### Name" headings under "## Runbooks" of
// docs/monitoring.md.
func runbookSections(t *testing.T) []string {
	t.Helper()
	_, p := allRenders(t)
	text, err := os.ReadFile(filepath.Join(p.Root, monitoringDoc))
	if err != nil {
		t.Fatal(err)
	}
	section, ok := mdtable.Section(string(text), "## Runbooks")
	if !ok {
		t.Fatalf("%s has no ## Runbooks section", monitoringDoc)
	}
	var names []string
	for _, m := range regexp.MustCompile(`(?m)^### (\S+)\s*$`).FindAllStringSubmatch(section, -1) {
		names = append(names, m[1])
	}
	return names
}

// TestRunbooks: every alert links to its own section of docs/monitoring.md
// (GitHub's anchor of the heading "### Name"), every runbook section is an
// alert's, and every alert has a severity and a summary.
func TestRunbooks(t *testing.T) {
	sections := map[string]bool{}
	for _, s := range runbookSections(t) {
		if sections[s] {
			t.Errorf("%s has two runbooks for %s", monitoringDoc, s)
		}
		sections[s] = true
	}
	alerts := map[string]bool{}
	for _, a := range chartRules(t).alerts() {
		alerts[a.Alert] = true
		if !sections[a.Alert] {
			t.Errorf("%s has no runbook section for %s", monitoringDoc, a.Alert)
		}
		if want := RunbookBase + "#" + strings.ToLower(a.Alert); a.Annotations["runbook_url"] != want {
			t.Errorf("%s: runbook_url %q, want %q", a.Alert, a.Annotations["runbook_url"], want)
		}
		if a.Labels["severity"] == "" || a.Annotations["summary"] == "" {
			t.Errorf("%s: needs a severity label and a summary", a.Alert)
		}
	}
	for s := range sections {
		if !alerts[s] {
			t.Errorf("%s has a runbook for %s, which is not an alert", monitoringDoc, s)
		}
	}
}

// TestDashboardConfigMap: the chart's dashboard ConfigMap is labelled for
// Grafana's sidecar and holds the dashboard file as it is; the dashboard
// queries through its datasource variable.
func TestDashboardConfigMap(t *testing.T) {
	_, p := allRenders(t)
	want, err := os.ReadFile(p.DashboardPath())
	if err != nil {
		t.Fatal(err)
	}
	cm := Find(monitoringRenders(t)[1].Objects, "ConfigMap", "confighash-dashboard")
	if cm == nil {
		t.Fatal("dashboards.enabled renders no ConfigMap confighash-dashboard")
	}
	if got := cm.GetLabels()[DashboardLabel]; got != "1" {
		t.Errorf("label %s = %q, want \"1\"", DashboardLabel, got)
	}
	data, _ := cm.Object["data"].(map[string]any)
	if got, _ := data["confighash.json"].(string); got != strings.TrimRight(string(want), "\n") {
		t.Errorf("the ConfigMap's confighash.json is not %s", p.DashboardPath())
	}
	var d struct {
		UID    string `json:"uid"`
		Panels []struct {
			Type       string `json:"type"`
			Title      string `json:"title"`
			Datasource struct {
				UID string `json:"uid"`
			} `json:"datasource"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(want, &d); err != nil {
		t.Fatalf("%s: %v", p.DashboardPath(), err)
	}
	queries := 0
	for _, panel := range d.Panels {
		if panel.Type == "row" {
			continue
		}
		if panel.Datasource.UID != "${datasource}" || len(panel.Targets) == 0 {
			t.Errorf("panel %q: datasource %q, %d queries", panel.Title, panel.Datasource.UID, len(panel.Targets))
		}
		for _, q := range panel.Targets {
			if strings.TrimSpace(q.Expr) == "" {
				t.Errorf("panel %q has an empty query", panel.Title)
			}
			queries++
		}
	}
	if d.UID == "" || queries == 0 {
		t.Errorf("dashboard uid %q, %d queries", d.UID, queries)
	}
}

// TestMonitoringValues: by default the chart renders none of the
// monitoring objects; the ServiceMonitor verifies the CA of the cert mode
// and sends, through its authorization (never a bearerTokenFile), the token
// of the Secret it is given, or else of the scraper ServiceAccount the
// chart then creates; unknown keys are refused.
func TestMonitoringValues(t *testing.T) {
	for _, u := range helmTemplate(t, Namespace, nil) {
		if k := u.GetKind(); k == "ServiceMonitor" || k == "PrometheusRule" || u.GetName() == "confighash-dashboard" {
			t.Errorf("%s rendered by default", Key(u))
		}
	}
	objs := helmTemplate(t, "tools", map[string]any{
		"certMode":       "cert-manager",
		"serviceMonitor": map[string]any{"enabled": true, "labels": map[string]any{"release": "prometheus"}, "tokenSecret": map[string]any{"name": "scraper-token"}},
	})
	sm := Find(objs, "ServiceMonitor", "confighash")
	if sm == nil {
		t.Fatal("no ServiceMonitor")
	}
	ep := sm.Object["spec"].(map[string]any)["endpoints"].([]any)[0].(map[string]any)
	want := map[string]any{
		"port": "https-metrics", "scheme": "https", "path": "/metrics", "interval": "30s",
		"authorization": map[string]any{"type": "Bearer", "credentials": map[string]any{"name": "scraper-token", "key": "token"}},
		"tlsConfig": map[string]any{
			"serverName": "confighash-webhook.tools.svc",
			"ca":         map[string]any{"secret": map[string]any{"name": "confighash-webhook-tls", "key": "ca.crt"}},
		},
	}
	if diff := cmp.Diff(want, ep); diff != "" {
		t.Errorf("endpoint (-want +got):\n%s", diff)
	}
	if sm.GetLabels()["release"] != "prometheus" {
		t.Errorf("labels %v lack serviceMonitor.labels", sm.GetLabels())
	}
	for _, kind := range []string{"ServiceAccount", "Secret", "ClusterRoleBinding"} {
		for _, u := range objs {
			if u.GetKind() == kind && strings.HasPrefix(u.GetName(), "confighash-metrics-") {
				t.Errorf("%s rendered although tokenSecret.name names the Secret", Key(u))
			}
		}
	}
	checkScraper(t, helmTemplate(t, "tools", map[string]any{"serviceMonitor": map[string]any{"enabled": true}}), "tools")
	_, p := allRenders(t)
	for name, values := range map[string]map[string]any{
		"unknown serviceMonitor key": {"serviceMonitor": map[string]any{"enable": true}},
		"bad interval":               {"serviceMonitor": map[string]any{"interval": "30 seconds"}},
		"non-string rule label":      {"prometheusRule": map[string]any{"labels": map[string]any{"release": 1}}},
	} {
		if _, err := HelmTemplate(p.Chart(), Namespace, values); err == nil {
			t.Errorf("%s: %v rendered without error", name, values)
		}
	}
}

// TestMonitoringNamesTheWebhook: the apiserver's admission series are
// selected by the webhook's name in the code's configuration, in the rules
// and in the dashboard alike.
func TestMonitoringNamesTheWebhook(t *testing.T) {
	_, p := allRenders(t)
	selector := regexp.MustCompile(`apiserver_admission_webhook_[a-z_]+\{name="([^"]*)"`)
	for _, path := range []string{p.RulesPath(), p.DashboardPath()} {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		text := strings.ReplaceAll(string(data), `\"`, `"`)
		found := selector.FindAllStringSubmatch(text, -1)
		if len(found) == 0 {
			t.Errorf("%s selects no apiserver admission series by webhook name", path)
		}
		for _, m := range found {
			if m[1] != webhook.Name {
				t.Errorf("%s selects webhook %q; the code's is %q", path, m[1], webhook.Name)
			}
		}
		if n := strings.Count(text, "apiserver_admission_webhook_"); n != len(found) {
			t.Errorf("%s: %d apiserver admission selectors, %d of them by webhook name", path, n, len(found))
		}
	}
}

// checkScraper: with no tokenSecret.name the ServiceMonitor sends the token
// of the ServiceAccount confighash-metrics-scraper, which is bound to the
// metrics reader role and has its token Secret in the namespace.
func checkScraper(t *testing.T, objs []*unstructured.Unstructured, ns string) {
	t.Helper()
	sm := Find(objs, "ServiceMonitor", "confighash")
	if sm == nil {
		t.Fatal("no ServiceMonitor")
	}
	ep := sm.Object["spec"].(map[string]any)["endpoints"].([]any)[0].(map[string]any)
	want := map[string]any{"type": "Bearer", "credentials": map[string]any{"name": "confighash-metrics-token", "key": "token"}}
	if diff := cmp.Diff(want, ep["authorization"]); diff != "" {
		t.Errorf("authorization (-want +got):\n%s", diff)
	}
	if _, ok := ep["bearerTokenFile"]; ok {
		t.Error("the endpoint still sets the deprecated bearerTokenFile")
	}
	secret := Find(objs, "Secret", "confighash-metrics-token")
	if secret == nil || secret.Object["type"] != "kubernetes.io/service-account-token" ||
		secret.GetAnnotations()["kubernetes.io/service-account.name"] != "confighash-metrics-scraper" || secret.GetNamespace() != ns {
		t.Errorf("token Secret %v: not confighash-metrics-scraper's in %s", secret, ns)
	}
	if Find(objs, "ServiceAccount", "confighash-metrics-scraper") == nil {
		t.Error("no ServiceAccount confighash-metrics-scraper")
	}
	crb := Find(objs, "ClusterRoleBinding", "confighash-metrics-scraper")
	if crb == nil {
		t.Fatal("no ClusterRoleBinding confighash-metrics-scraper")
	}
	want = map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "confighash-metrics-reader"}
	if diff := cmp.Diff(want, crb.Object["roleRef"]); diff != "" {
		t.Errorf("roleRef (-want +got):\n%s", diff)
	}
	wantSubjects := []any{map[string]any{"kind": "ServiceAccount", "name": "confighash-metrics-scraper", "namespace": ns}}
	if diff := cmp.Diff(wantSubjects, crb.Object["subjects"]); diff != "" {
		t.Errorf("subjects (-want +got):\n%s", diff)
	}
}
