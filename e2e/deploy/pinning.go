package deploy

import (
	"context"
	"fmt"
)

// ExamplePinNamespaces are the namespaces the kustomize component
// components/pinning binds the pinner's ClusterRole in as shipped; the chart
// is rendered with the same pinning.namespaces to compare the two.
var ExamplePinNamespaces = []string{"team-a", "team-b"}

// RenderPinning renders pinning for both cert modes: each overlay with the
// component components/pinning, as a user's overlay would include it, and
// the chart with pinning.enabled and pinning.namespaces; and the chart in
// namespaced mode with pinning, which kustomize composes only by hand.
func RenderPinning(ctx context.Context, p Paths) ([]Render, error) {
	pinning := map[string]any{"enabled": true, "namespaces": toAny(ExamplePinNamespaces)}
	renders, err := renderComponent(ctx, p, "pinning", map[string]any{"pinning": pinning})
	if err != nil {
		return nil, err
	}
	for i := range renders {
		renders[i].PinNamespaces = ExamplePinNamespaces
	}
	objs, err := HelmTemplate(p.Chart(), Namespace, map[string]any{
		"certMode": "self", "createNamespace": true, "pinning": pinning, "watchNamespaces": toAny(ExampleNamespaces),
	})
	if err != nil {
		return nil, fmt.Errorf("rendering pinning in namespaced mode: %w", err)
	}
	renders = append(renders, Render{Name: "helm/self+pinning+namespaced", Mode: CertModes[0], Objects: objs,
		Namespaces: ExampleNamespaces, PinNamespaces: ExamplePinNamespaces})
	return renders, nil
}
