package deploy

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/lint"
	"helm.sh/helm/v3/pkg/lint/support"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"

	"github.com/confighash/confighash/e2e/controlplane"
	"github.com/confighash/confighash/internal/injection"
	"github.com/confighash/confighash/internal/workload"
	"github.com/confighash/confighash/webhook"
)

func helmTemplate(t *testing.T, namespace string, values map[string]any) []*unstructured.Unstructured {
	t.Helper()
	_, p := allRenders(t)
	objs, err := HelmTemplate(p.Chart(), namespace, values)
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

// TestChartDefaults: without createNamespace (the usual
// `helm install --create-namespace`) the chart renders everything but the
// Namespace.
func TestChartDefaults(t *testing.T) {
	byName := rendersByName(t)
	withNS := index(t, byName["helm/self"].Objects)
	got := index(t, helmTemplate(t, Namespace, nil))
	for key := range withNS {
		if _, ok := got[key]; !ok && !strings.HasPrefix(key, "Namespace ") {
			t.Errorf("%s is rendered only with createNamespace", key)
		}
	}
	for key := range got {
		if strings.HasPrefix(key, "Namespace ") {
			t.Errorf("%s rendered without createNamespace", key)
		}
	}
	if len(got) != len(withNS)-1 {
		t.Errorf("%d objects without createNamespace, %d with it", len(got), len(withNS))
	}
}

// TestChartRejectsBadValues: the values schema stops mistakes before
// anything reaches a cluster.
func TestChartRejectsBadValues(t *testing.T) {
	_, p := allRenders(t)
	for name, values := range map[string]map[string]any{
		"unknown certMode":  {"certMode": "external"},
		"zero flapLimit":    {"flapLimit": 0},
		"bad flapWindow":    {"flapWindow": "10 minutes"},
		"zero write budget": {"writesPerSecond": 0},
	} {
		if _, err := HelmTemplate(p.Chart(), Namespace, values); err == nil {
			t.Errorf("%s: %v rendered without error", name, values)
		}
	}
}

// TestChartValues: the values reach the objects, and another release
// namespace is used consistently, including in the webhook configuration,
// which must still equal the code's.
func TestChartValues(t *testing.T) {
	const ns = "tools"
	objs := helmTemplate(t, ns, map[string]any{
		"certMode":        "cert-manager",
		"createNamespace": true,
		"replicas":        3,
		"image":           map[string]any{"tag": "v9.9.9"},
		"coalesceWindow":  "5s",
		"extraArgs":       []any{"--zap-log-level=debug"},
	})
	r := decode(t, Render{Name: "helm/values", Mode: CertModes[1], Objects: objs})
	for _, u := range objs {
		if u.GetNamespace() != "" && u.GetNamespace() != ns {
			t.Errorf("%s is not in the release namespace %s", Key(u), ns)
		}
	}
	if *r.Deployment.Spec.Replicas != 3 {
		t.Errorf("replicas %d, want 3", *r.Deployment.Spec.Replicas)
	}
	if want := Image + ":v9.9.9"; r.Container.Image != want {
		t.Errorf("image %s, want %s", r.Container.Image, want)
	}
	args := r.Container.Args
	if !slices.Contains(args, "--coalesce-window=5s") || args[len(args)-1] != "--zap-log-level=debug" {
		t.Errorf("args %v lack --coalesce-window=5s or end not with the extra args", args)
	}
	want := webhook.Configuration("confighash", injection.New(ns), workload.Kinds(), admissionregistrationv1.WebhookClientConfig{
		Service: &admissionregistrationv1.ServiceReference{Namespace: ns, Name: "confighash-webhook", Path: ptr.To(webhook.Path), Port: ptr.To[int32](443)},
	})
	got := r.MWC.DeepCopy()
	got.Labels = map[string]string{"app.kubernetes.io/name": got.Labels["app.kubernetes.io/name"]}
	if ann := got.Annotations["cert-manager.io/inject-ca-from"]; ann != ns+"/confighash-webhook" {
		t.Errorf("inject-ca-from %q", ann)
	}
	got.Annotations = nil
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("MutatingWebhookConfiguration in namespace %s differs from the code's (-code +chart):\n%s", ns, diff)
	}
	serving := servingCert(t, r)
	if serving == nil || !slices.Contains(serving.Spec.DNSNames, "confighash-webhook."+ns+".svc") {
		t.Errorf("serving Certificate not for the Service in %s", ns)
	}
}

// TestChartLint runs `helm lint` (its Go API), as strict as the CLI's
// --strict: informational messages pass, warnings fail.
func TestChartLint(t *testing.T) {
	_, p := allRenders(t)
	kubeVersion, err := chartutil.ParseKubeVersion(controlplane.KubernetesVersion)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range CertModes {
		linter := lint.AllWithKubeVersion(p.Chart(), map[string]any{"certMode": m.ChartMode}, Namespace, kubeVersion)
		for _, msg := range linter.Messages {
			if msg.Severity >= support.WarningSev {
				t.Errorf("certMode=%s: %s", m.ChartMode, msg)
			} else {
				t.Logf("certMode=%s: %s", m.ChartMode, msg)
			}
		}
	}
}
