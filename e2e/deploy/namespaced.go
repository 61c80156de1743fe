package deploy

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// ExampleNamespaces are the namespaces the kustomize component
// components/namespaced serves as shipped; the chart is rendered with the
// same watchNamespaces to compare the two.
var ExampleNamespaces = []string{"team-a", "team-b"}

// Component is the directory of a kustomize component.
func (p Paths) Component(name string) string {
	return filepath.Join(p.Root, "manifests", "components", name)
}

// RenderNamespaced renders namespaced mode for both cert modes: each
// overlay with the component components/namespaced, as a user's overlay
// would include it, and the chart with watchNamespaces=ExampleNamespaces.
func RenderNamespaced(ctx context.Context, p Paths) ([]Render, error) {
	renders, err := renderComponent(ctx, p, "namespaced", map[string]any{"watchNamespaces": toAny(ExampleNamespaces)})
	if err != nil {
		return nil, err
	}
	for i := range renders {
		renders[i].Namespaces = ExampleNamespaces
	}
	return renders, nil
}

// renderComponent renders, for each cert mode, the overlay with the
// component components/<component> as kustomize/<overlay>+<component>, and
// the chart with values as helm/<chartMode>+<component>.
func renderComponent(ctx context.Context, p Paths, component string, values map[string]any) ([]Render, error) {
	var renders []Render
	for _, m := range CertModes {
		objs, err := kustomizeWithComponent(ctx, p, p.Overlay(m.Overlay), p.Component(component))
		if err != nil {
			return nil, err
		}
		renders = append(renders, Render{Name: "kustomize/" + m.Overlay + "+" + component, Mode: m, Objects: objs})
	}
	for _, m := range CertModes {
		v := maps.Clone(values)
		v["certMode"], v["createNamespace"] = m.ChartMode, true
		objs, err := HelmTemplate(p.Chart(), Namespace, v)
		if err != nil {
			return nil, err
		}
		renders = append(renders, Render{Name: "helm/" + m.ChartMode + "+" + component, Mode: m, Objects: objs})
	}
	return renders, nil
}

// kustomizeWithComponent builds a throwaway kustomization of resources dir
// plus component, the way the component's documentation says to use it.
// kustomize wants relative paths.
func kustomizeWithComponent(ctx context.Context, p Paths, dir, component string) ([]*unstructured.Unstructured, error) {
	tmp, err := os.MkdirTemp("", "confighash-kustomize-")
	if err != nil {
		return nil, fmt.Errorf("creating a kustomization dir: %w", err)
	}
	defer os.RemoveAll(tmp)
	var rel []string
	for _, d := range []string{dir, component} {
		r, err := filepath.Rel(tmp, d)
		if err != nil {
			return nil, fmt.Errorf("relative path to %s: %w", d, err)
		}
		rel = append(rel, r)
	}
	k := fmt.Sprintf("apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n  - %s\ncomponents:\n  - %s\n", rel[0], rel[1])
	if err := os.WriteFile(filepath.Join(tmp, "kustomization.yaml"), []byte(k), 0o600); err != nil {
		return nil, fmt.Errorf("writing the kustomization: %w", err)
	}
	objs, err := Kustomize(ctx, p.Kubectl, tmp)
	if err != nil {
		return nil, fmt.Errorf("%s with component %s: %w", dir, component, err)
	}
	return objs, nil
}

func toAny(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// NamespacesArg is the value of --namespaces in args, split; nil without it.
func NamespacesArg(args []string) []string {
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, "--namespaces="); ok {
			return strings.Split(v, ",")
		}
	}
	return nil
}
