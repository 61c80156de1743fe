//go:build e2e

package incluster

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/confighash/confighash/e2e/images"
	"github.com/confighash/confighash/internal/contract"
)

// TestUndoOfAnImageAndConfigChange: as a Helm upgrade writes them, the
// ConfigMap changes and then the Deployment's image (the same sample app,
// named by its digest, so that the node can run both), and the webhook
// stamps both into one revision. `kubectl rollout undo` then goes back to
// exactly the first ReplicaSet, with its image, and its new pod prints the
// first value from the first snapshot, not the live ConfigMap. Without
// pinning the undo would be re-stamped to the live content, a third
// ReplicaSet printing the new value.
func TestUndoOfAnImageAndConfigChange(t *testing.T) {
	ctx := env.SpecContext(t)
	// The two writes go back to back, within this coalescing window, so
	// that the hook's re-stamp for the ConfigMap cannot come between them
	// however slow the second write is: the webhook must stamp the image
	// change with the content written just before it.
	first := pinnedFirstRevision(t, map[string]string{contract.CoalesceWindowAnnotation: "10s"})
	ns, cm, web := first.ns, first.cm, first.web
	rs1, stamp1, snapshot1 := first.rs, first.stamp, first.snapshot
	image1 := web.Spec.Template.Spec.Containers[0].Image

	idx, err := env.Registry.Index(ctx, images.SampleApp())
	if err != nil {
		t.Fatal(err)
	}
	digest, err := idx.Digest()
	if err != nil {
		t.Fatal(err)
	}
	image2 := images.Domain + "/sampleapp@" + digest.String()
	env.Update(t, cm, func() { cm.Data["mode"] = "second" })
	env.Update(t, web, func() { web.Spec.Template.Spec.Containers[0].Image = image2 })
	if err := env.WaitRollout(ctx, ns, web.Name, 3*time.Minute); err != nil {
		t.Fatal(err)
	}
	rs2 := env.CurrentReplicaSet(t, ns, web.Name)
	if n := len(env.ReplicaSets(t, ns, web.Name)); rs2 == rs1 || n != 2 {
		t.Fatalf("after the image and config change web runs %s of %d ReplicaSets, want a second of 2 (one revision for both)", rs2, n)
	}
	if env.StampOf(t, web) == stamp1 {
		t.Fatal("the image and config change kept the first stamp")
	}
	second := readyPods(t, ns, rs2, 1)[0]
	expectImage(t, second, image2)
	expectPinnedValue(t, second, "", "second")

	back := undoToFirst(t, web, first)
	expectImage(t, back, image1)
	expectPinnedValue(t, back, snapshot1, "good")
	t.Logf("after the undo, %s of the first ReplicaSet runs %s and printed good, from %s", back.Name, image1, snapshot1)
	expectRolledBack(t, web)
}

// expectImage checks that pod p's one container runs image.
func expectImage(t *testing.T, p corev1.Pod, image string) {
	t.Helper()
	if got := p.Spec.Containers[0].Image; got != image {
		t.Fatalf("pod %s runs %s, want %s", p.Name, got, image)
	}
}
