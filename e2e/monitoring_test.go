//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/confighash/confighash/e2e/controlplane"
	"github.com/confighash/confighash/e2e/framework"
)

// The monitoring the chart ships, as files of the repository.
const (
	rulesFile     = "charts/confighash/files/prometheus-rules.yaml"
	dashboardFile = "charts/confighash/dashboards/confighash.json"
	readerRoles   = "manifests/base/clusterrole.yaml"
	// metricsReader is the ClusterRole docs/metrics.md tells users to bind.
	metricsReader = "confighash-metrics-reader"
	// caBundle is the ConfigMap (key ca.crt) self-managed mode publishes.
	caBundle = "confighash-ca-bundle"
)

// TestMonitoring: a real Prometheus scrapes confighash's metrics endpoint
// as docs/metrics.md tells users to (a ServiceAccount token bound to
// confighash-metrics-reader, the certificate verified against the CA in
// confighash-ca-bundle), and the apiserver (whose admission series the
// alerts use), and loads the chart's rules. After a config change, a
// write while the webhook is down and confighash's start-up re-check,
// every dashboard query and every vector selector of every alert
// expression returns series from that Prometheus: one that returns
// nothing is a typo in a metric name or a label. An alert expression as a
// whole has series only while it fires (x > 0), so its selectors are
// queried instead; a dashboard query has series whenever its metrics do,
// so it is queried whole. Every rule evaluates without error.
func TestMonitoring(t *testing.T) {
	if env.ConfighashPID() == 0 {
		t.Skip("needs the local confighash: the spec restarts it with the metrics endpoint on")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	start := time.Now()
	root, err := controlplane.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()

	// confighash with its metrics endpoint on.
	ports, err := controlplane.FreePorts(1)
	if err != nil {
		t.Fatal(err)
	}
	metricsAddr := "127.0.0.1:" + strconv.Itoa(ports[0])
	stopConfighash(t)
	startWithMetrics := func() {
		t.Helper()
		if err := env.Confighash.Start(ctx, "--metrics-bind-address="+metricsAddr); err != nil {
			t.Fatal(err)
		}
	}
	startWithMetrics()
	t.Cleanup(func() { _ = env.Confighash.Stop(context.Background()) })

	// The scrapers' identities: one bound to the manifests' reader role
	// only, for confighash; one for the apiserver's own /metrics.
	applyReaderRole(ctx, t, root)
	ns := env.NewNamespace(t, false)
	token := func(name, role string) string {
		t.Helper()
		sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
		env.Create(t, sa)
		binding := &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: ns + "-" + name},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: name}},
		}
		env.Create(t, binding)
		t.Cleanup(func() { _ = env.Client.Delete(context.Background(), binding) })
		tr, err := cs.CoreV1().ServiceAccounts(ns).CreateToken(ctx, name, &authenticationv1.TokenRequest{
			Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To(int64(3600))}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, name+".token")
		if err := os.WriteFile(path, []byte(tr.Status.Token), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	confighashToken := token("prometheus", metricsReader)
	apiserverToken := token("apiserver-scraper", "system:monitoring")

	// The CA the docs name for self-managed mode, and the cluster's.
	var bundle corev1.ConfigMap
	if err := env.Client.Get(ctx, types.NamespacedName{Namespace: framework.Namespace, Name: caBundle}, &bundle); err != nil {
		t.Fatalf("the CA bundle ConfigMap docs/metrics.md names: %v", err)
	}
	confighashCA := filepath.Join(dir, "confighash-ca.crt")
	apiserverCA := filepath.Join(dir, "apiserver-ca.crt")
	caData := env.Config.CAData
	if len(caData) == 0 {
		if caData, err = os.ReadFile(env.Config.CAFile); err != nil {
			t.Fatal(err)
		}
	}
	for path, data := range map[string][]byte{confighashCA: []byte(bundle.Data["ca.crt"]), apiserverCA: caData} {
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	apiserver, err := url.Parse(env.Config.Host)
	if err != nil {
		t.Fatal(err)
	}

	// As docs/metrics.md's plain Prometheus, with a static target for the
	// out-of-cluster process. Its certificate's SANs are localhost and
	// 127.0.0.1 (the Service's DNS names in a cluster), so server_name is
	// localhost here.
	config := fmt.Sprintf(`global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files:
  - %q
scrape_configs:
  - job_name: confighash
    scheme: https
    authorization:
      credentials_file: %q
    tls_config:
      ca_file: %q
      server_name: localhost
    static_configs:
      - targets: [%q]
  - job_name: apiserver
    scheme: https
    authorization:
      credentials_file: %q
    tls_config:
      ca_file: %q
    static_configs:
      - targets: [%q]
`, filepath.Join(root, rulesFile), confighashToken, confighashCA, metricsAddr, apiserverToken, apiserverCA, apiserver.Host)
	prom, err := framework.StartPrometheus(ctx, dir, []byte(config), os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			text, _ := controlplane.TailFile(prom.LogPath, 40)
			t.Logf("prometheus log:\n%s", text)
		}
		_ = prom.Stop(context.Background())
	})
	waitTargetsUp(ctx, t, prom)

	// A config change the hook rolls out.
	app := env.NewNamespace(t, true)
	env.Create(t, configMap(app, "cfg", map[string]string{"a": "1"}))
	env.Create(t, secret(app, "sec", map[string]string{"password": "p"}))
	d := deploymentOf(app, "reader", podSpec("cfg", "sec"))
	env.Create(t, d)
	before := env.StampOf(t, d)
	changeConfig(t, app, "2")
	waitStampChange(t, d, before)

	// The webhook down: the apiserver fails open on a write, and a change
	// goes unseen until confighash's start-up re-check re-stamps.
	if err := env.Confighash.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	unstamped := deploymentOf(app, "written-while-down", podSpec("cfg", "sec"))
	env.Create(t, unstamped)
	before = env.StampOf(t, d)
	changeConfig(t, app, "3")
	startWithMetrics()
	waitStampChange(t, d, before)
	t.Logf("scraped, changed, failed open and re-checked in %s", time.Since(start).Round(time.Second))

	queries := monitoringQueries(t, root)
	var empty []string
	err = wait.PollUntilContextTimeout(ctx, time.Second, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		empty = empty[:0]
		for _, q := range queries {
			n, err := prom.Series(ctx, q.expr)
			if err != nil {
				return false, err
			}
			if n == 0 {
				empty = append(empty, q.String())
			}
		}
		return len(empty) == 0, nil
	})
	if err != nil {
		t.Errorf("%d of %d queries return no series from Prometheus (%v):\n  %s", len(empty), len(queries), err, strings.Join(empty, "\n  "))
	}
	checkRulesHealthy(ctx, t, prom, root)
	t.Logf("%d queries returned series; spec took %s", len(queries), time.Since(start).Round(time.Second))
}

// applyReaderRole creates the metrics reader ClusterRole exactly as the
// manifests ship it (the local confighash runs without them).
func applyReaderRole(ctx context.Context, t *testing.T, root string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, readerRoles))
	if err != nil {
		t.Fatal(err)
	}
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for {
		var role rbacv1.ClusterRole
		if err := dec.Decode(&role); err != nil {
			t.Fatalf("no ClusterRole %s in %s: %v", metricsReader, readerRoles, err)
		}
		if role.Name != metricsReader {
			continue
		}
		if err := env.Client.Create(ctx, &role); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
		return
	}
}

func changeConfig(t *testing.T, ns, value string) {
	t.Helper()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cfg"}}
	env.Update(t, cm, func() { cm.Data = map[string]string{"a": value} })
}

func waitStampChange(t *testing.T, obj client.Object, from string) {
	t.Helper()
	err := wait.PollUntilContextTimeout(env.SpecContext(t), 200*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		return env.StampOf(t, obj) != from, nil
	})
	if err != nil {
		t.Fatalf("%s/%s not re-stamped from %q: %v", obj.GetNamespace(), obj.GetName(), from, err)
	}
}

// waitTargetsUp waits until Prometheus has scraped both targets, and
// says why not otherwise (a refused token, an unverified certificate).
func waitTargetsUp(ctx context.Context, t *testing.T, prom *framework.Prometheus) {
	t.Helper()
	type target struct {
		Labels    map[string]string `json:"labels"`
		Health    string            `json:"health"`
		LastError string            `json:"lastError"`
	}
	var data struct {
		Active []target `json:"activeTargets"`
	}
	err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		if err := prom.Get(ctx, "/api/v1/targets", url.Values{"state": {"active"}}, &data); err != nil {
			return false, err
		}
		up := 0
		for _, tg := range data.Active {
			if tg.Health == "up" {
				up++
			}
		}
		return up == 2 && len(data.Active) == 2, nil
	})
	if err != nil {
		t.Fatalf("targets not up: %v: %+v", err, data.Active)
	}
}

// query is one expression to check, and where it comes from.
type query struct {
	from, expr string
}

func (q query) String() string { return q.from + ": " + q.expr }

// selectorRE finds the vector selectors in an expression: a metric name
// (every one of ours has an underscore), its matchers if any, not followed
// by "(" (a function such as histogram_quantile).
var selectorRE = regexp.MustCompile(`\b([a-zA-Z_:][a-zA-Z0-9_:]*_[a-zA-Z0-9_:]*)(\{[^}]*\})?(\[[^\]]*\])?\s*([(]?)`)

// groupingRE finds the label lists of by (…) and without (…), which are
// no selectors.
var groupingRE = regexp.MustCompile(`\b(by|without)\s*\([^)]*\)`)

// monitoringQueries are every dashboard query, whole (with Grafana's
// $__rate_interval as 1m), and every vector selector of every alert.
func monitoringQueries(t *testing.T, root string) []query {
	t.Helper()
	var out []query
	data, err := os.ReadFile(filepath.Join(root, dashboardFile))
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(data, &dash); err != nil {
		t.Fatal(err)
	}
	for _, p := range dash.Panels {
		for _, tg := range p.Targets {
			out = append(out, query{"panel " + p.Title, strings.ReplaceAll(tg.Expr, "$__rate_interval", "1m")})
		}
	}
	data, err = os.ReadFile(filepath.Join(root, rulesFile))
	if err != nil {
		t.Fatal(err)
	}
	var rules struct {
		Groups []struct {
			Rules []struct {
				Alert string `json:"alert"`
				Expr  string `json:"expr"`
			} `json:"rules"`
		} `json:"groups"`
	}
	if err := yaml.Unmarshal(data, &rules); err != nil {
		t.Fatal(err)
	}
	alerts := 0
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			alerts++
			var selectors []string
			for _, m := range selectorRE.FindAllStringSubmatch(groupingRE.ReplaceAllString(r.Expr, ""), -1) {
				if m[4] == "(" {
					continue
				}
				if s := m[1] + m[2]; !slices.Contains(selectors, s) {
					selectors = append(selectors, s)
				}
			}
			if len(selectors) == 0 {
				t.Errorf("alert %s: no selector found in %q", r.Alert, r.Expr)
			}
			for _, s := range selectors {
				out = append(out, query{"alert " + r.Alert, s})
			}
		}
	}
	if alerts == 0 || len(out) == alerts {
		t.Fatalf("%d alerts, %d queries", alerts, len(out))
	}
	return out
}

// checkRulesHealthy: Prometheus loaded every alert of the rule file and
// evaluates each without error.
func checkRulesHealthy(ctx context.Context, t *testing.T, prom *framework.Prometheus, root string) {
	t.Helper()
	var data struct {
		Groups []struct {
			Rules []struct {
				Name      string `json:"name"`
				Health    string `json:"health"`
				LastError string `json:"lastError"`
			} `json:"rules"`
		} `json:"groups"`
	}
	if err := prom.Get(ctx, "/api/v1/rules", nil, &data); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, g := range data.Groups {
		for _, r := range g.Rules {
			n++
			if r.Health != "ok" {
				t.Errorf("rule %s: health %q: %s", r.Name, r.Health, r.LastError)
			}
		}
	}
	if n == 0 {
		t.Errorf("Prometheus loaded no rules from %s", filepath.Join(root, rulesFile))
	}
}
