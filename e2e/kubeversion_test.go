//go:build e2e

package e2e

import (
	"testing"

	"k8s.io/client-go/discovery"
)

// TestServesTheAskedKubernetes: the API server is the release the run asked
// for (CONFIGHASH_E2E_KUBERNETES), so that a run of the specs on an older
// minor (make e2e-oldest) cannot pass on the default one instead.
func TestServesTheAskedKubernetes(t *testing.T) {
	if env.KubernetesVersion == "" {
		t.Skip("no Kubernetes version was asked for this cluster")
	}
	dc, err := discovery.NewDiscoveryClientForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	v, err := dc.ServerVersion()
	if err != nil {
		t.Fatal(err)
	}
	if v.GitVersion != env.KubernetesVersion {
		t.Fatalf("the API server is Kubernetes %s, the run asked for %s", v.GitVersion, env.KubernetesVersion)
	}
	t.Logf("the API server is Kubernetes %s", v.GitVersion)
}
