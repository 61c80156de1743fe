package restamp

import (
	"context"
	"fmt"
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

// A tenant holds every slot of --max-concurrent-rollouts (10) with ten
// canaries that never become ready, and re-stamps them every ten minutes by
// changing their ConfigMaps; another namespace's change, a minute in, waits
// for a slot. It is re-stamped once the tenant's first rollouts reach
// --rollout-timeout, counted from their first re-stamp: at most one timeout
// after the tenant began, plus one look at the rollouts.
func TestVictimNamespaceWaitsAtMostOneTimeout(t *testing.T) {
	const step = 30 * time.Second
	now := wavesT0
	clock := func() time.Time { return now }
	stamp := func(ns, cm, v string) string {
		return stampOf(t, hookKey, ns, envFromCM(cm), nil, holding(map[string]string{"k": v}))
	}
	slim := func(ns, name, v string) client.Object {
		return slimCM(t, ns, name, map[string]string{"k": v})
	}
	var objs []client.Object
	var readers []Request
	add := func(ns, name, cm string) {
		objs = append(objs, slim(ns, cm, "v0"))
		d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Generation: 1}}
		d.Spec.Replicas = ptr.To(int32(1))
		d.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}}
		d.Spec.Template.Labels = map[string]string{"app": name}
		d.Spec.Template.Spec = envFromCM(cm)
		d.Spec.Template.Annotations = map[string]string{contract.ChecksumAnnotation: stamp(ns, cm, "v0")}
		objs = append(objs, d)
		readers = append(readers, reqIn(ns, name))
	}
	for _, ns := range []string{"tenant", "victim"} {
		objs = append(objs, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns,
			Labels: map[string]string{contract.InjectionLabel: contract.InjectionEnabled}}})
	}
	for i := range 10 {
		add("tenant", fmt.Sprintf("t%d", i), fmt.Sprintf("cm%d", i))
	}
	add("victim", "v0", "app")
	c := withReadersIndex(fake.NewClientBuilder()).WithObjects(objs...).Build()
	r, _ := testReconciler(t, c, newFlapGuard(DefaultOptions(), 100), clock)
	r.events = events.NewFakeRecorder(100000)
	r.planner = newPlanner(16, 10, nil)
	r.planner.now = clock
	r.rollouts = rolloutOptions{timeout: 15 * time.Minute, poll: rolloutPoll}
	ctx := context.Background()
	setData := func(ns, name, v string) {
		cur := &corev1.ConfigMap{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, cur); err != nil {
			t.Fatal(err)
		}
		o := slim(ns, name, v)
		o.SetResourceVersion(cur.ResourceVersion)
		if err := c.Update(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	neverReady := func(name string) {
		d := &appsv1.Deployment{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: "tenant", Name: name}, d); err != nil {
			t.Fatal(err)
		}
		d.Status = appsv1.DeploymentStatus{ObservedGeneration: d.Generation, Replicas: 1}
		if err := c.Status().Update(ctx, d); err != nil {
			t.Fatal(err)
		}
	}
	victimStamp := func() string {
		d := &appsv1.Deployment{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: "victim", Name: "v0"}, d); err != nil {
			t.Fatal(err)
		}
		return d.Spec.Template.Annotations[contract.ChecksumAnnotation]
	}
	changedAt := wavesT0.Add(time.Minute)
	for now = wavesT0; now.Before(wavesT0.Add(2 * time.Hour)); now = now.Add(step) {
		if el := now.Sub(wavesT0); el%(10*time.Minute) == 0 {
			for i := range 10 {
				setData("tenant", fmt.Sprintf("cm%d", i), fmt.Sprintf("x%d", el/(10*time.Minute)))
			}
		}
		if now.Equal(changedAt) {
			setData("victim", "app", "v1")
		}
		for _, req := range readers {
			if _, err := r.Reconcile(ctx, req); err != nil {
				t.Fatalf("%s at +%s: %v", req, now.Sub(wavesT0), err)
			}
			if req.Namespace == "tenant" {
				neverReady(req.Name)
			}
		}
		if victimStamp() == stamp("victim", "app", "v1") {
			wait := now.Sub(changedAt)
			t.Logf("the victim's change waited %s for a slot", wait)
			if bound := r.rollouts.timeout + step; wait > bound {
				t.Fatalf("the victim waited %s, over --rollout-timeout plus one look, %s", wait, bound)
			}
			return
		}
	}
	t.Fatalf("the victim's change was not re-stamped in %s while the tenant held the slots", now.Sub(changedAt))
}
