//go:build e2e

package e2e

import (
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/confighash/confighash/e2e/framework"
)

// Flux's kustomize-controller detects drift with a server-side apply
// dry-run of the Git manifest and compares the result with the live object.
// The webhook runs on that dry-run too, so the stamp it predicts must equal
// the live one, both right after stamping and after a config-triggered
// re-stamp; otherwise Flux would report drift forever (and re-apply).
func TestFluxSSADryRunSeesNoDrift(t *testing.T) {
	ns := env.NewNamespace(t, true)
	docs := splitManifest(t, manifest)
	apply := func(u *unstructured.Unstructured, opts ...client.ApplyOption) *unstructured.Unstructured {
		t.Helper()
		u = u.DeepCopy()
		u.SetNamespace(ns)
		ac := client.ApplyConfigurationFromUnstructured(u)
		opts = append(opts, client.FieldOwner("kustomize-controller"), client.ForceOwnership)
		if err := env.Client.Apply(env.SpecContext(t), ac, opts...); err != nil {
			t.Fatalf("applying %s: %v", u.GetName(), err)
		}
		return u
	}
	for _, d := range docs {
		apply(d)
	}
	deployment := docs[len(docs)-1]
	live := &appsv1.Deployment{}
	live.Namespace, live.Name = ns, deployment.GetName()

	check := func(t *testing.T) {
		want := env.StampOf(t, live)
		if want == "" {
			t.Fatal("live deployment has no stamp")
		}
		dry := deployment.DeepCopy()
		dry.SetNamespace(ns)
		if err := env.Client.Apply(env.SpecContext(t), client.ApplyConfigurationFromUnstructured(dry),
			client.FieldOwner("kustomize-controller"), client.ForceOwnership, client.DryRunAll); err != nil {
			t.Fatalf("dry-run apply: %v", err)
		}
		got, err := framework.TemplateStamp(dry)
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("SSA dry-run predicts stamp %q, live has %q: Flux would see drift", got, want)
		}
	}
	t.Run("after stamping", check)
	t.Run("after a config-triggered re-stamp", func(t *testing.T) {
		before := env.StampOf(t, live)
		cm := docs[0].DeepCopy()
		_ = unstructured.SetNestedField(cm.Object, "2", "data", "a")
		apply(cm)
		expectRevision(t, ns, live.Name, 2)
		if env.StampOf(t, live) == before {
			t.Fatal("config change did not re-stamp")
		}
		check(t)
	})
}

func splitManifest(t *testing.T, m string) []*unstructured.Unstructured {
	t.Helper()
	var out []*unstructured.Unstructured
	dec := yaml.NewYAMLOrJSONDecoder(strings.NewReader(m), 4096)
	for {
		u := &unstructured.Unstructured{}
		if err := dec.Decode(&u.Object); err != nil {
			break
		}
		if len(u.Object) > 0 {
			out = append(out, u)
		}
	}
	if len(out) != 3 {
		t.Fatalf("manifest has %d objects, want 3", len(out))
	}
	return out
}
