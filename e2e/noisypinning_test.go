//go:build e2e

package e2e

import (
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/confighash/confighash/internal/pinning"
)

// TestANoisyNamespaceStarvesNoPinning: with --pinning, one namespace creates
// pods as fast as 128 clients can, each naming a ReplicaSet of its own as its
// controller, so that every admission to the pod webhook reads a revision
// and two sources live. Meanwhile another namespace's Deployment makes 20
// pods. Each of those must be pinned: a pod the pod webhook turns away is
// admitted unpinned (failurePolicy Ignore) and reads the live config, which
// is what pinning exists to prevent.
func TestANoisyNamespaceStarvesNoPinning(t *testing.T) {
	restartWith(t, "--pinning")
	noisy, quiet := pinningNamespace(t), pinningNamespace(t)
	for _, ns := range []string{noisy, quiet} {
		env.Create(t, configMap(ns, "app", map[string]string{"k": "v1"}))
		env.Create(t, secret(ns, "db", map[string]string{"password": "p1"}))
	}
	time.Sleep(time.Second) // the Namespace cache sees the label
	spec := podSpec("app", "db")
	owner := deploymentOf(noisy, "owner", spec)
	owner.Spec.Replicas = ptr.To[int32](0)
	env.Create(t, owner)
	rs := &appsv1.ReplicaSet{}
	get(t, noisy, expectReplicaSets(t, noisy, "owner", 1)[0], rs)

	const noisyClients, perNoisyClient, quietPods = 128, 20, 20
	stop := flood(env.SpecContext(t), noisyClients, perNoisyClient, func(c, i int) client.Object {
		return floodPod(rs, fmt.Sprintf("f%d-%d", c, i))
	}, func(obj client.Object) string {
		return "pinned=" + obj.GetAnnotations()[pinning.PodAnnotation]
	})
	defer stop() // on a failed wait; once stopped, a no-op
	time.Sleep(3 * time.Second)

	d := deploymentOf(quiet, "web", spec)
	d.Spec.Replicas = ptr.To[int32](quietPods)
	start := time.Now()
	env.Create(t, d)
	pods := podsWhere(t, quiet, quietPods, func(corev1.Pod) bool { return true })
	quietFor := time.Since(start)
	made, failed := stop()
	t.Logf("quiet: %d pods in %v; noisy meanwhile: %v, %d failed", len(pods), quietFor.Round(time.Millisecond), made, failed)
	var unpinned []string
	for _, p := range pods {
		if p.Annotations[pinning.PodAnnotation] != "true" {
			unpinned = append(unpinned, p.Name+" ("+p.Annotations[pinning.PodAnnotation]+")")
		}
	}
	if len(unpinned) > 0 {
		t.Errorf("%d of %d quiet pods not pinned: %v", len(unpinned), len(pods), unpinned)
	}
}

// floodPod is a pod of rs's revision that rs does not select (so its
// controller lets it go rather than deleting it) and no scheduler places.
func floodPod(rs *appsv1.ReplicaSet, name string) *corev1.Pod {
	t := rs.Spec.Template.DeepCopy()
	t.Spec.SchedulerName = "nobody"
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: rs.Namespace, Name: name,
			Labels:      map[string]string{"flood": "x"},
			Annotations: t.Annotations,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: rs.Name, UID: rs.UID,
				Controller: ptr.To(true)}},
		},
		Spec: t.Spec,
	}
}
