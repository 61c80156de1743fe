package restamp

import (
	"context"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/confighash/confighash/internal/contract"
)

// A reader that waited for a slot of the bound and then waits for its
// rollout window (closed by its own tenant's annotation) asks for no slot
// until the window opens, so its namespace must not count as waiting for
// one: a free slot goes to another namespace's change at once, not after
// the window opens.
func TestAReaderWaitingForItsWindowHoldsNoSlotBack(t *testing.T) {
	now := wavesT0 // Tuesday 1 December 2026, 15:00 UTC
	clock := func() time.Time { return now }
	stamp := func(ns, cm, v string) string {
		return stampOf(t, hookKey, ns, envFromCM(cm), nil, holding(map[string]string{"k": v}))
	}
	var objs []client.Object
	add := func(ns, name, cm string) {
		objs = append(objs, slimCM(t, ns, cm, map[string]string{"k": "v0"}))
		d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Generation: 1}}
		d.Spec.Replicas = ptr.To(int32(1))
		d.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}}
		d.Spec.Template.Labels = map[string]string{"app": name}
		d.Spec.Template.Spec = envFromCM(cm)
		d.Spec.Template.Annotations = map[string]string{contract.ChecksumAnnotation: stamp(ns, cm, "v0")}
		objs = append(objs, d)
	}
	for _, ns := range []string{"a", "b", "c"} {
		objs = append(objs, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns,
			Labels: map[string]string{contract.InjectionLabel: contract.InjectionEnabled}}})
	}
	add("a", "a0", "cma0")
	add("a", "a1", "cma1")
	add("b", "b0", "cmb0")
	add("c", "c0", "cmc0")
	c := withReadersIndex(fake.NewClientBuilder()).WithObjects(objs...).Build()
	r, _ := testReconciler(t, c, newFlapGuard(DefaultOptions(), 100), clock)
	r.events = events.NewFakeRecorder(100000)
	r.planner = newPlanner(16, 2, nil) // --max-concurrent-rollouts=2
	r.planner.now = clock
	r.rollouts = rolloutOptions{timeout: 15 * time.Minute, poll: rolloutPoll}
	ctx := context.Background()
	setData := func(ns, name, v string) {
		t.Helper()
		cur := &corev1.ConfigMap{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, cur); err != nil {
			t.Fatal(err)
		}
		o := slimCM(t, ns, name, map[string]string{"k": v})
		o.SetResourceVersion(cur.ResourceVersion)
		if err := c.Update(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	get := func(ns, name string) *appsv1.Deployment {
		t.Helper()
		d := &appsv1.Deployment{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, d); err != nil {
			t.Fatal(err)
		}
		return d
	}
	rolledOut := func(ns, name string) {
		t.Helper()
		d := get(ns, name)
		d.Status = appsv1.DeploymentStatus{ObservedGeneration: d.Generation, Replicas: 1, UpdatedReplicas: 1, ReadyReplicas: 1, AvailableReplicas: 1,
			Conditions: []appsv1.DeploymentCondition{
				{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue},
				{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionTrue, Reason: "NewReplicaSetAvailable"}}}
		if err := c.Status().Update(ctx, d); err != nil {
			t.Fatal(err)
		}
	}
	reconcile := func(ns, name string) {
		t.Helper()
		if _, err := r.Reconcile(ctx, reqIn(ns, name)); err != nil {
			t.Fatalf("%s/%s: %v", ns, name, err)
		}
	}
	restamped := func(ns, name, cm, v string) bool {
		return get(ns, name).Spec.Template.Annotations[contract.ChecksumAnnotation] == stamp(ns, cm, v)
	}

	// a0 and c0 take both slots; b0 waits for one.
	setData("a", "cma0", "v1")
	setData("c", "cmc0", "v1")
	setData("b", "cmb0", "v1")
	reconcile("a", "a0")
	reconcile("c", "c0")
	reconcile("b", "b0")
	if !restamped("a", "a0", "cma0", "v1") || !restamped("c", "c0", "cmc0", "v1") || restamped("b", "b0", "cmb0", "v1") {
		t.Fatal("setup: want a0 and c0 in flight, b0 waiting for the bound")
	}
	// b0's tenant gives it a window that is closed now (it opens on Mondays).
	annotateIn(t, c, get("b", "b0"), contract.WindowAnnotation, "Mon 00:00-00:01 UTC")
	reconcile("b", "b0") // waits for its window now, not for a slot

	// c0 rolls out: one of the two slots is free.
	rolledOut("c", "c0")
	reconcile("c", "c0")
	if n, _ := r.planner.counts(); n != 1 {
		t.Fatalf("%d rollouts in flight, want 1 (a0)", n)
	}

	// Namespace a has another change. A slot is free, and the only other
	// namespace with a stale reader waits for its window, not for a slot.
	setData("a", "cma1", "v1")
	for i := 0; i < 120; i++ { // an hour, looking every 30 s
		now = now.Add(30 * time.Second)
		reconcile("b", "b0")
		reconcile("a", "a1")
		if restamped("a", "a1", "cma1", "v1") {
			return
		}
	}
	n, _ := r.planner.counts()
	_, bWaits := r.planner.state.blocked.byNS["b"]
	t.Logf("namespace b among the slot waiters: %v", bWaits)
	t.Fatalf("a1 not re-stamped within an hour with %d of 2 slots taken: b0, waiting for its window (closed until Monday), still counts as a slot waiter of namespace b and keeps namespace a from the free slot", n)
}
