package restamp

import (
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/confighash/confighash/internal/contract"
)

// A reader that waited for a slot of the bound and then waits for its
// rollout window (closed by its own tenant's annotation) asks for no slot
// until the window opens, so its namespace must not count as waiting for
// one: a free slot goes to another namespace's change at once, not after
// the window opens.
func TestAReaderWaitingForItsWindowHoldsNoSlotBack(t *testing.T) {
	f := newSlotsFixture(t, 2, reader{"a", "a0", "cma0"}, reader{"a", "a1", "cma1"}, reader{"b", "b0", "cmb0"}, reader{"c", "c0", "cmc0"})

	// a0 and c0 take both slots; b0 waits for one.
	f.setData("a", "cma0", "v1")
	f.setData("c", "cmc0", "v1")
	f.setData("b", "cmb0", "v1")
	f.reconcile("a", "a0")
	f.reconcile("c", "c0")
	f.reconcile("b", "b0")
	if !f.restamped("a", "a0", "cma0") || !f.restamped("c", "c0", "cmc0") || f.restamped("b", "b0", "cmb0") {
		t.Fatal("setup: want a0 and c0 in flight, b0 waiting for the bound")
	}
	// b0's tenant gives it a window that is closed now (wavesT0 is a
	// Tuesday; it opens on Mondays).
	annotateIn(t, f.c, f.get("b", "b0"), contract.WindowAnnotation, "Mon 00:00-00:01 UTC")
	f.reconcile("b", "b0") // waits for its window now, not for a slot

	// c0 rolls out: one of the two slots is free.
	f.setStatus("c", "c0", appsv1.DeploymentStatus{Replicas: 1, UpdatedReplicas: 1, ReadyReplicas: 1, AvailableReplicas: 1,
		Conditions: []appsv1.DeploymentCondition{
			{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue},
			{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionTrue, Reason: "NewReplicaSetAvailable"}}})
	f.reconcile("c", "c0")
	if n, _ := f.r.planner.counts(); n != 1 {
		t.Fatalf("%d rollouts in flight, want 1 (a0)", n)
	}

	// Namespace a has another change. A slot is free, and the only other
	// namespace with a stale reader waits for its window, not for a slot.
	f.setData("a", "cma1", "v1")
	for range 120 { // an hour, looking every 30 s
		f.now = f.now.Add(30 * time.Second)
		f.reconcile("b", "b0")
		f.reconcile("a", "a1")
		if f.restamped("a", "a1", "cma1") {
			return
		}
	}
	n, _ := f.r.planner.counts()
	_, bWaits := f.r.planner.state.blocked.byNS["b"]
	t.Fatalf("a1 not re-stamped within an hour with %d of 2 slots taken (namespace b among the slot waiters: %v): b0 waits for its window, closed until Monday", n, bWaits)
}
