//go:build e2e

package incluster

import (
	"context"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
)

// TestSnapshotLifetimeOnTheNode: with revisionHistoryLimit 2, five changes
// leave exactly the snapshots of the three ReplicaSets kept, each owned by
// its own; after `kubectl delete --cascade=orphan` of the Deployment and of
// its current ReplicaSet the running pod keeps its snapshot (now owned by
// the pod), and a restart of its container reads it again; once the pod is
// gone, nothing is left. The garbage collector and the snapshot controller
// do this on the owner references the pinner writes.
func TestSnapshotLifetimeOnTheNode(t *testing.T) {
	ctx := env.SpecContext(t)
	ns := pinningNamespace(t)
	cm := sharedConfig(t, ns, map[string]string{"mode": "v0"})
	web := pinnedReader(ns, "web", 1)
	web.Spec.RevisionHistoryLimit = ptr.To[int32](2)
	env.Create(t, web)
	if err := env.WaitRollout(ctx, ns, web.Name, 3*time.Minute); err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"v1", "v2", "v3", "v4", "v5"} {
		stamp := env.StampOf(t, web)
		env.Update(t, cm, func() { cm.Data["mode"] = v })
		restampedTo(t, web, stamp)
	}

	var live []types.UID
	err := wait.PollUntilContextTimeout(ctx, time.Second, time.Minute, true, func(context.Context) (bool, error) {
		live = live[:0]
		for _, rs := range env.ReplicaSets(t, ns, web.Name) {
			live = append(live, rs.UID)
		}
		snaps := failureSnapshots(t, ns)
		if len(live) != 3 || len(snaps) != 3 {
			return false, nil
		}
		for _, s := range snaps {
			if len(s.OwnerReferences) != 1 || !slices.Contains(live, s.OwnerReferences[0].UID) {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		t.Fatalf("after five changes with revisionHistoryLimit 2: ReplicaSets %v, snapshots %v; want one snapshot owned by each of 3", live, failureNames(failureSnapshots(t, ns)))
	}

	current := env.CurrentReplicaSet(t, ns, web.Name)
	pod := readyPods(t, ns, current, 1)[0]
	snapshot := pinnedTo(t, pod)
	// Named now: once the Deployment is gone, no ReplicaSet is its.
	var older []string
	for _, rs := range env.ReplicaSets(t, ns, web.Name) {
		if rs.Name != current {
			older = append(older, rs.Name)
		}
	}
	env.Kubectl(t, "", "delete", "-n", ns, "deployment", web.Name, "--cascade=orphan")
	env.Kubectl(t, "", "delete", "-n", ns, "replicaset", current, "--cascade=orphan")
	env.Kubectl(t, "", append([]string{"delete", "-n", ns, "replicaset"}, older...)...)
	waitSnapshotsOwned(t, ns, []string{snapshot}, []types.UID{pod.UID})
	expectPrinted(t, killInit(t, pod), "v5")
	t.Logf("orphaned pod %s kept %s, and its restarted container read it", pod.Name, snapshot)

	env.Kubectl(t, "", "delete", "-n", ns, "pod", pod.Name)
	waitSnapshotsOwned(t, ns, nil, nil)
}

// waitSnapshotsOwned waits until ns's snapshots are exactly names, each
// owned by exactly owners.
func waitSnapshotsOwned(t *testing.T, ns string, names []string, owners []types.UID) {
	t.Helper()
	var have []metav1.PartialObjectMetadata
	err := wait.PollUntilContextTimeout(env.SpecContext(t), time.Second, 2*time.Minute, true, func(context.Context) (bool, error) {
		have = failureSnapshots(t, ns)
		if !slices.Equal(failureNames(have), names) {
			return false, nil
		}
		for _, s := range have {
			var got []types.UID
			for _, o := range s.OwnerReferences {
				got = append(got, o.UID)
			}
			if !slices.Equal(got, owners) {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		t.Fatalf("snapshots %v, want %v owned by %v", failureNames(have), names, owners)
	}
}
