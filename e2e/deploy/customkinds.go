package deploy

import "fmt"

// ExampleWorkloadKind is the chart's workloadKinds entry the renders below
// use: an OpenKruise CloneSet, as in values.yaml.
var ExampleWorkloadKind = map[string]any{
	"group": "apps.kruise.io", "version": "v1alpha1", "kind": "CloneSet",
	"resource": "clonesets", "template": "spec.template",
}

// RenderCustomKinds renders the chart with one custom workload kind,
// cluster-wide and in namespaced mode, so that the checks of the webhook
// rules and the RBAC against the code cover what workloadKinds adds.
func RenderCustomKinds(p Paths) ([]Render, error) {
	var renders []Render
	for _, namespaced := range []bool{false, true} {
		values := map[string]any{"certMode": "self", "createNamespace": true,
			"workloadKinds": []any{ExampleWorkloadKind}}
		name := "helm/self+workloadKinds"
		var nss []string
		if namespaced {
			values["watchNamespaces"] = toAny(ExampleNamespaces)
			name += "+namespaced"
			nss = ExampleNamespaces
		}
		objs, err := HelmTemplate(p.Chart(), Namespace, values)
		if err != nil {
			return nil, fmt.Errorf("rendering %s: %w", name, err)
		}
		renders = append(renders, Render{Name: name, Mode: CertModes[0], Objects: objs, Namespaces: nss})
	}
	return renders, nil
}
