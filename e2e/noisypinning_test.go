//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

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
	ctx, stop := context.WithCancel(env.SpecContext(t))
	defer stop()
	var made, pinned, failed atomic.Int32
	var mu sync.Mutex
	why := map[string]int{} // the noisy pods not pinned, by the annotation they got
	var flood sync.WaitGroup
	for c := range noisyClients {
		flood.Go(func() {
			for i := range perNoisyClient {
				if ctx.Err() != nil {
					return
				}
				p := floodPod(rs, fmt.Sprintf("f%d-%d", c, i))
				if err := env.Client.Create(ctx, p); err != nil {
					failed.Add(1)
					continue
				}
				made.Add(1)
				if v := p.Annotations[pinning.PodAnnotation]; v == "true" {
					pinned.Add(1)
				} else {
					mu.Lock()
					why[v]++
					mu.Unlock()
				}
			}
		})
	}
	time.Sleep(3 * time.Second)

	d := deploymentOf(quiet, "web", spec)
	d.Spec.Replicas = ptr.To[int32](quietPods)
	start := time.Now()
	env.Create(t, d)
	pods := podsWhere(t, quiet, quietPods, func(corev1.Pod) bool { return true })
	quietFor := time.Since(start)
	stop()
	flood.Wait()
	t.Logf("quiet: %d pods in %v; noisy: %d pods created (%d pinned, the others %v), %d failed meanwhile",
		len(pods), quietFor.Round(time.Millisecond), made.Load(), pinned.Load(), why, failed.Load())
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
