//go:build e2e

package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

const (
	// bigWorkloads of bigWorkloadBytes each is issue 26's shape: enough,
	// cached whole, to take a replica from 70 to 416 MiB.
	bigWorkloads     = 200
	bigWorkloadBytes = 1 << 20
	// bigWorkloadsGrowth is issue 26's bar for what they may add to the
	// process's RSS when they sit in a namespace confighash does not serve.
	bigWorkloadsGrowth = 40.0 // MiB
)

// bigPodSpec is a tenant's pod spec that carries about size bytes in one
// plain env value (an inline config blob): nothing confighash reads,
// everything a whole-object cache keeps. It also reads an optional
// ConfigMap, as a tenant's workload would.
func bigPodSpec(name string, size int) corev1.PodSpec {
	return corev1.PodSpec{Containers: []corev1.Container{{
		Name: "app", Image: "registry.k8s.io/pause:3.10",
		Env: []corev1.EnvVar{{Name: "BLOB", Value: strings.Repeat("b", size)}},
		EnvFrom: []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: name + "-cfg"}, Optional: ptr.To(true)}}},
	}}}
}

// TestBigWorkloadsInAnUnservedNamespace holds issue 26's bar: 200
// Deployments of about 1 MiB in a namespace confighash does not serve grow
// its RSS by less than 40 MiB, and a served namespace's readers are still
// stamped and re-stamped.
func TestBigWorkloadsInAnUnservedNamespace(t *testing.T) {
	if env.ConfighashPID() == 0 {
		t.Skip("reads the local confighash process's memory")
	}
	// A fresh process, so the baseline is not what an earlier spec left.
	restartConfighash(t)
	f := newFixture(t)
	before := settledRSS(t)
	resetPeakRSS(t)

	ns := env.NewNamespace(t, false)
	// Gone before the next spec starts: the control plane's work of deleting
	// these bulky objects made the specs after this one miss their waits.
	deleteWhenDone(t, env.Client, []client.Object{&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}})
	objs := make([]client.Object, bigWorkloads)
	for i := range objs {
		name := fmt.Sprintf("big-%d", i)
		d := deploymentOf(ns, name, bigPodSpec(name, bigWorkloadBytes-4096))
		d.Spec.Replicas = ptr.To[int32](0)
		// Paused, so that the Deployment controller makes no ReplicaSet of
		// 1 MiB for each: that work, and its deletion, held up the
		// controller for the specs after this one. confighash caches a
		// paused Deployment all the same.
		d.Spec.Paused = true
		labels := map[string]string{"app": name}
		d.Spec.Selector.MatchLabels, d.Spec.Template.Labels = labels, labels
		objs[i] = d
	}
	start := time.Now()
	createConcurrently(t, env.Client, 16, objs)
	created := time.Since(start)

	// One watch stream carries every Deployment to confighash in the order
	// they were written: once the hook re-stamps a reader created after
	// the 200, it has been through them all, whatever it keeps of them.
	marker := deploymentOf(f.ns, "after-big", readerSpec())
	labels := map[string]string{"app": "after-big"}
	marker.Spec.Selector.MatchLabels, marker.Spec.Template.Labels = labels, labels
	env.Create(t, marker)
	if got, want := env.StampOf(t, marker), expectedChecksum(t, f.ns, &marker.Spec.Template.Spec, nil); got != want {
		t.Fatalf("a reader created after the big Deployments: stamp %q, want %q", got, want)
	}
	f.setCM(t, "after-big")
	want := expectedChecksum(t, f.ns, &f.app.Spec.Template.Spec, nil)
	waitStamp(t, marker, want, 30*time.Second)
	waitStamp(t, f.app, want, 30*time.Second)

	after := settledRSS(t)
	peak := peakMiB(t)
	t.Logf("%d Deployments × %d KiB in an unserved namespace, created in %s: RSS %.1f → %.1f MiB (+%.1f MiB), peak %.1f MiB (+%.1f MiB); bar: grows by < %.0f MiB",
		bigWorkloads, bigWorkloadBytes/1024, created.Round(time.Millisecond), before, after, after-before, peak, peak-before, bigWorkloadsGrowth)
	if after-before >= bigWorkloadsGrowth {
		t.Errorf("RSS grew by %.1f MiB (%.1f → %.1f), want < %.0f MiB", after-before, before, after, bigWorkloadsGrowth)
	}
}
