//go:build e2e

package e2e

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/confighash/confighash/internal/contract"
)

// TestNamespaceServedLater: sources created while their namespace is not
// served are cached as placeholders (identity only). Once it is labelled,
// the webhook stamps from their real content, and the hook, which reads
// the cache only, re-stamps from it too: a change of one source gives the
// checksum of all of them as they are, the unchanged Secret included.
func TestNamespaceServedLater(t *testing.T) {
	ns := env.NewNamespace(t, false)
	env.Create(t, configMap(ns, "app", map[string]string{"k": "v1"}))
	env.Create(t, secret(ns, "db", map[string]string{"password": "p1"}))
	// Let the informers see them while the namespace is not served.
	time.Sleep(2 * time.Second)

	nsObj := &corev1.Namespace{}
	if err := env.Client.Get(env.SpecContext(t), client.ObjectKey{Name: ns}, nsObj); err != nil {
		t.Fatal(err)
	}
	nsObj.Labels[contract.InjectionLabel] = contract.InjectionEnabled
	if err := env.Client.Update(env.SpecContext(t), nsObj); err != nil {
		t.Fatal(err)
	}
	// The webhook's configuration selects the namespace as soon as the
	// apiserver has the label; confighash's Namespace cache follows.
	time.Sleep(time.Second)

	spec := podSpec("app", "db")
	d := deploymentOf(ns, "web", spec)
	env.Create(t, d)
	if got, want := env.StampOf(t, d), expectedChecksum(t, ns, &spec, nil); got != want {
		t.Fatalf("stamp at create %q, want %q (the sources' content)", got, want)
	}

	cm := &corev1.ConfigMap{}
	if err := env.Client.Get(env.SpecContext(t), client.ObjectKey{Namespace: ns, Name: "app"}, cm); err != nil {
		t.Fatal(err)
	}
	cm.Data["k"] = "v2"
	if err := env.Client.Update(env.SpecContext(t), cm); err != nil {
		t.Fatal(err)
	}
	waitStamp(t, d, expectedChecksum(t, ns, &spec, nil), 30*time.Second)
}
