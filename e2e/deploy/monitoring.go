package deploy

import (
	"context"
	"fmt"
	"path/filepath"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// Where the monitoring pieces live: the rules and the dashboard have one
// home each, in the chart; the kustomize component holds a copy of the
// rules (kustomize reads no file outside its directory), which the tests
// keep equal.
const (
	RulesFile     = "files/prometheus-rules.yaml"         // under the chart
	DashboardFile = "dashboards/confighash.json"          // under the chart
	RulesTestFile = "testdata/prometheus-rules-test.yaml" // promtool test rules, in this module
	// DashboardLabel is what Grafana's dashboard sidecar selects on.
	DashboardLabel = "grafana_dashboard"
)

// MonitoringValues turn on everything the chart has for monitoring.
func MonitoringValues() map[string]any {
	on := map[string]any{"enabled": true}
	return map[string]any{"createNamespace": true, "serviceMonitor": on, "prometheusRule": on, "dashboards": on}
}

// RenderMonitoring renders the self-managed overlay with the component
// components/monitoring, and the chart (certMode self) with
// MonitoringValues.
func RenderMonitoring(ctx context.Context, p Paths) ([]Render, error) {
	mode := CertModes[0]
	k, err := kustomizeWithComponent(ctx, p, p.Overlay(mode.Overlay), p.Component("monitoring"))
	if err != nil {
		return nil, err
	}
	h, err := HelmTemplate(p.Chart(), Namespace, MonitoringValues())
	if err != nil {
		return nil, err
	}
	return []Render{
		{Name: "kustomize/" + mode.Overlay + "+monitoring", Mode: mode, Objects: k},
		{Name: "helm/" + mode.ChartMode + "+monitoring", Mode: mode, Objects: h},
	}, nil
}

// RuleFile is the rule file (groups) a render's PrometheusRule holds, as a
// Prometheus server or promtool reads it.
func RuleFile(objs []*unstructured.Unstructured) ([]byte, error) {
	rule := Find(objs, "PrometheusRule", "confighash")
	if rule == nil {
		return nil, fmt.Errorf("no PrometheusRule confighash rendered")
	}
	spec, ok := rule.Object["spec"].(map[string]any)
	if !ok {
		return nil, fmt.Errorf("PrometheusRule confighash has no spec")
	}
	out, err := yaml.Marshal(spec)
	if err != nil {
		return nil, fmt.Errorf("encoding the rules: %w", err)
	}
	return out, nil
}

// RulesPath is the chart's rule file.
func (p Paths) RulesPath() string { return filepath.Join(p.Chart(), RulesFile) }

// DashboardPath is the chart's Grafana dashboard.
func (p Paths) DashboardPath() string { return filepath.Join(p.Chart(), DashboardFile) }
