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

// slotsFixture is a hook under --max-concurrent-rollouts on a fake clock:
// Deployments of one replica in served namespaces, each reading a
// ConfigMap of its own.
type slotsFixture struct {
	t   *testing.T
	ctx context.Context
	c   client.Client
	r   *reconciler
	now time.Time
	// readers in the order they were added.
	readers []Request
}

// reader is a Deployment name in a namespace, reading ConfigMap cm.
type reader struct{ ns, name, cm string }

func newSlotsFixture(t *testing.T, maxInFlight int, readers ...reader) *slotsFixture {
	f := &slotsFixture{t: t, ctx: context.Background(), now: wavesT0}
	var objs []client.Object
	served := map[string]bool{}
	for _, rd := range readers {
		if !served[rd.ns] {
			served[rd.ns] = true
			objs = append(objs, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: rd.ns,
				Labels: map[string]string{contract.InjectionLabel: contract.InjectionEnabled}}})
		}
		objs = append(objs, slimCM(t, rd.ns, rd.cm, map[string]string{"k": "v0"}))
		d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: rd.name, Namespace: rd.ns, Generation: 1}}
		d.Spec.Replicas = ptr.To(int32(1))
		d.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": rd.name}}
		d.Spec.Template.Labels = map[string]string{"app": rd.name}
		d.Spec.Template.Spec = envFromCM(rd.cm)
		d.Spec.Template.Annotations = map[string]string{contract.ChecksumAnnotation: f.stamp(rd.ns, rd.cm, "v0")}
		objs = append(objs, d)
		f.readers = append(f.readers, reqIn(rd.ns, rd.name))
	}
	f.c = withReadersIndex(fake.NewClientBuilder()).WithObjects(objs...).Build()
	clock := func() time.Time { return f.now }
	f.r, _ = testReconciler(t, f.c, newFlapGuard(DefaultOptions(), 100), clock)
	f.r.events = events.NewFakeRecorder(100000)
	f.r.planner = newPlanner(16, maxInFlight, nil)
	f.r.planner.now = clock
	f.r.rollouts = rolloutOptions{timeout: 15 * time.Minute, poll: rolloutPoll}
	return f
}

// stamp is the stamp of a reader of cm in ns holding k=v.
func (f *slotsFixture) stamp(ns, cm, v string) string {
	return stampOf(f.t, hookKey, ns, envFromCM(cm), nil, holding(map[string]string{"k": v}))
}

// setData writes k=v to ConfigMap name in ns.
func (f *slotsFixture) setData(ns, name, v string) {
	f.t.Helper()
	cur := &corev1.ConfigMap{}
	if err := f.c.Get(f.ctx, client.ObjectKey{Namespace: ns, Name: name}, cur); err != nil {
		f.t.Fatal(err)
	}
	o := slimCM(f.t, ns, name, map[string]string{"k": v})
	o.SetResourceVersion(cur.ResourceVersion)
	if err := f.c.Update(f.ctx, o); err != nil {
		f.t.Fatal(err)
	}
}

func (f *slotsFixture) get(ns, name string) *appsv1.Deployment {
	f.t.Helper()
	d := &appsv1.Deployment{}
	if err := f.c.Get(f.ctx, client.ObjectKey{Namespace: ns, Name: name}, d); err != nil {
		f.t.Fatal(err)
	}
	return d
}

// setStatus writes status onto Deployment name in ns, at its generation.
func (f *slotsFixture) setStatus(ns, name string, status appsv1.DeploymentStatus) {
	f.t.Helper()
	d := f.get(ns, name)
	status.ObservedGeneration = d.Generation
	d.Status = status
	if err := f.c.Status().Update(f.ctx, d); err != nil {
		f.t.Fatal(err)
	}
}

func (f *slotsFixture) reconcile(ns, name string) {
	f.t.Helper()
	if _, err := f.r.Reconcile(f.ctx, reqIn(ns, name)); err != nil {
		f.t.Fatalf("%s/%s at +%s: %v", ns, name, f.now.Sub(wavesT0), err)
	}
}

// restamped reports whether Deployment name in ns carries the stamp of
// cm holding k=v1, the change the tests make.
func (f *slotsFixture) restamped(ns, name, cm string) bool {
	return f.get(ns, name).Spec.Template.Annotations[contract.ChecksumAnnotation] == f.stamp(ns, cm, "v1")
}

// A tenant holds every slot of --max-concurrent-rollouts (10) with ten
// canaries that never become ready, and re-stamps them every ten minutes by
// changing their ConfigMaps; another namespace's change, a minute in, waits
// for a slot. It is re-stamped once the tenant's first rollouts reach
// --rollout-timeout, counted from their first re-stamp: at most one timeout
// after the tenant began, plus one look at the rollouts.
func TestVictimNamespaceWaitsAtMostOneTimeout(t *testing.T) {
	const step = 30 * time.Second
	var readers []reader
	for i := range 10 {
		readers = append(readers, reader{"tenant", fmt.Sprintf("t%d", i), fmt.Sprintf("cm%d", i)})
	}
	f := newSlotsFixture(t, 10, append(readers, reader{"victim", "v0", "app"})...)
	changedAt := wavesT0.Add(time.Minute)
	for f.now = wavesT0; f.now.Before(wavesT0.Add(2 * time.Hour)); f.now = f.now.Add(step) {
		if el := f.now.Sub(wavesT0); el%(10*time.Minute) == 0 {
			for i := range 10 {
				f.setData("tenant", fmt.Sprintf("cm%d", i), fmt.Sprintf("x%d", el/(10*time.Minute)))
			}
		}
		if f.now.Equal(changedAt) {
			f.setData("victim", "app", "v1")
		}
		for _, req := range f.readers {
			f.reconcile(req.Namespace, req.Name)
			if req.Namespace == "tenant" {
				f.setStatus("tenant", req.Name, appsv1.DeploymentStatus{Replicas: 1}) // never ready
			}
		}
		if f.restamped("victim", "v0", "app") {
			wait := f.now.Sub(changedAt)
			t.Logf("the victim's change waited %s for a slot", wait)
			if bound := f.r.rollouts.timeout + step; wait > bound {
				t.Fatalf("the victim waited %s, over --rollout-timeout plus one look, %s", wait, bound)
			}
			return
		}
	}
	t.Fatalf("the victim's change was not re-stamped in %s while the tenant held the slots", f.now.Sub(changedAt))
}
