package deploy

import (
	"maps"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestChartMatchesKustomize renders the chart and the overlays and compares
// them object by object, so that the two ways of installing confighash
// cannot drift apart.
func TestChartMatchesKustomize(t *testing.T) {
	byName := rendersByName(t)
	for _, m := range CertModes {
		t.Run(m.Overlay, func(t *testing.T) {
			sameObjects(t, "overlay", index(t, byName["kustomize/"+m.Overlay].Objects), index(t, byName["helm/"+m.ChartMode].Objects))
		})
	}
}

// TestNormaliseKeepsWhatMatters makes sure the drift test's normalisation
// only removes what it says it removes.
func TestNormaliseKeepsWhatMatters(t *testing.T) {
	in := &unstructured.Unstructured{Object: map[string]any{
		"metadata": map[string]any{"labels": map[string]any{
			"app.kubernetes.io/name": "confighash", "helm.sh/chart": "confighash-0.1.0", "app.kubernetes.io/managed-by": "Helm",
		}},
		"spec": map[string]any{"template": map[string]any{
			"metadata": map[string]any{"labels": map[string]any{"app.kubernetes.io/instance": "x"}},
			"spec": map[string]any{"containers": []any{
				map[string]any{"name": "a", "image": "ghcr.io/confighash/confighash:0.1.0"},
				map[string]any{"name": "b", "image": "localhost:5000/x@sha256:abc"},
			}},
		}},
	}}
	want := map[string]any{
		"metadata": map[string]any{"labels": map[string]any{"app.kubernetes.io/name": "confighash"}},
		"spec": map[string]any{"template": map[string]any{
			"metadata": map[string]any{},
			"spec": map[string]any{"containers": []any{
				map[string]any{"name": "a", "image": "ghcr.io/confighash/confighash"},
				map[string]any{"name": "b", "image": "localhost:5000/x"},
			}},
		}},
	}
	if diff := cmp.Diff(want, Normalise(in).Object); diff != "" {
		t.Errorf("Normalise (-want +got):\n%s", diff)
	}
	if in.GetLabels()["helm.sh/chart"] == "" {
		t.Error("Normalise changed its input")
	}
}

// sameObjects fails t unless kustomize's objects k (of an overlay or a
// component, what) and the chart's h are the same, object by object, once
// normalised.
func sameObjects(t *testing.T, what string, k, h map[string]*unstructured.Unstructured) {
	t.Helper()
	for _, key := range slices.Sorted(maps.Keys(k)) {
		if _, ok := h[key]; !ok {
			t.Errorf("%s: in the kustomize %s, missing from the chart", key, what)
		}
	}
	for _, key := range slices.Sorted(maps.Keys(h)) {
		kobj, ok := k[key]
		if !ok {
			t.Errorf("%s: in the chart, missing from the kustomize %s", key, what)
			continue
		}
		if diff := cmp.Diff(Normalise(kobj).Object, Normalise(h[key]).Object); diff != "" {
			t.Errorf("%s differs between kustomize (-) and the chart (+):\n%s", key, diff)
		}
	}
}

func index(t *testing.T, objs []*unstructured.Unstructured) map[string]*unstructured.Unstructured {
	t.Helper()
	m := map[string]*unstructured.Unstructured{}
	for _, u := range objs {
		key := Key(u)
		if _, dup := m[key]; dup {
			t.Errorf("%s rendered twice", key)
		}
		m[key] = u
	}
	return m
}
