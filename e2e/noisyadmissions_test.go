//go:build e2e

package e2e

import (
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/confighash/confighash/internal/contract"
)

// TestANoisyNamespaceStarvesNoAdmission: one namespace creates Deployments
// as fast as 32 clients can, each reading eight ConfigMaps that exist
// nowhere, so that every admission asks for the most fresh GETs a template
// can cause. Meanwhile another namespace creates 40 ordinary readers. Each
// of those must be stamped at its create (an admission turned away is
// admitted unstamped, failurePolicy Ignore: unpinned, and unstamped until
// its next change), and none written again after.
func TestANoisyNamespaceStarvesNoAdmission(t *testing.T) {
	noisy := env.NewNamespace(t, true)
	quiet := env.NewNamespace(t, true)
	env.Create(t, configMap(quiet, "cfg", map[string]string{"a": "1"}))
	env.Create(t, secret(quiet, "sec", map[string]string{"password": "hunter2"}))
	spec := podSpec("cfg", "sec")
	dryRunUntilCached(t, quiet, spec)

	const noisyClients, perNoisyClient, quietCreates, quietClients = 32, 60, 40, 4
	ctx := env.SpecContext(t)
	stop := flood(ctx, noisyClients, perNoisyClient, func(c, i int) client.Object {
		d := deploymentOf(noisy, fmt.Sprintf("n%d-%d", c, i), readsEightMissing(fmt.Sprintf("m%d-%d", c, i)))
		d.Spec.Replicas = ptr.To[int32](0)
		return d
	}, func(obj client.Object) string {
		if obj.(*appsv1.Deployment).Spec.Template.Annotations[contract.ChecksumAnnotation] == "" {
			return "unstamped"
		}
		return "stamped"
	})
	defer stop() // on a failed wait; once stopped, a no-op
	// Past any client's burst before the quiet namespace writes.
	time.Sleep(3 * time.Second)

	start := time.Now()
	took, unstamped := createAtOnce(ctx, t, quiet, "q", quietCreates, quietClients, spec)
	quietFor := time.Since(start)
	noisyMade, noisyFailed := stop()
	if len(took) == 0 {
		t.Fatal("no quiet create succeeded")
	}
	t.Logf("quiet: %d creates in %v, admission p50 %v, max %v; noisy meanwhile: %v, %d failed",
		len(took), quietFor.Round(time.Millisecond), pct(took, 50).Round(time.Millisecond), took[len(took)-1].Round(time.Millisecond),
		noisyMade, noisyFailed)
	if len(unstamped) > 0 {
		t.Errorf("%d of %d quiet creates admitted unstamped: %v", len(unstamped), quietCreates, unstamped)
	}
	// Past the hook's re-check of each create: none was re-stamped.
	time.Sleep(settle)
	var list appsv1.DeploymentList
	if err := env.Client.List(env.SpecContext(t), &list, client.InNamespace(quiet)); err != nil {
		t.Fatal(err)
	}
	for _, d := range list.Items {
		if d.Generation != 1 {
			t.Errorf("%s: generation %d, want 1: written again after its create", d.Name, d.Generation)
		}
	}
}

// readsEightMissing is a pod spec reading eight ConfigMaps named
// prefix-0..7, optional so that the Deployment is valid without them.
func readsEightMissing(prefix string) corev1.PodSpec {
	spec := corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "registry.k8s.io/pause:3.10"}}}
	for i := range 8 {
		spec.Containers[0].EnvFrom = append(spec.Containers[0].EnvFrom, corev1.EnvFromSource{ConfigMapRef: &corev1.ConfigMapEnvSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: fmt.Sprintf("%s-%d", prefix, i)}, Optional: ptr.To(true)}})
	}
	return spec
}
