package restamp

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/confighash/confighash/internal/contract"
)

// windowed is a waves fixture of n readers whose clock stands at Friday 4
// December 2026, 18:00 UTC (19:00 in Berlin) until the test moves it.
func windowed(t *testing.T, n int) (*wavesFixture, *time.Time) {
	t.Helper()
	f := newWavesFixture(t, n)
	now := time.Date(2026, 12, 4, 18, 0, 0, 0, time.UTC)
	f.r.now = func() time.Time { return now }
	f.r.waits = newWindowWaits()
	return f, &now
}

// annotate sets key on obj's copy in the fixture's cluster.
func (f *wavesFixture) annotate(t *testing.T, obj client.Object, key, value string) {
	t.Helper()
	annotateIn(t, f.c, obj, key, value)
}

// annotateIn sets key=value on obj (by its name) in c.
func annotateIn(t *testing.T, c client.Client, obj client.Object, key, value string) {
	t.Helper()
	if err := c.Get(context.Background(), client.ObjectKeyFromObject(obj), obj); err != nil {
		t.Fatal(err)
	}
	a := obj.GetAnnotations()
	if a == nil {
		a = map[string]string{}
	}
	a[key] = value
	obj.SetAnnotations(a)
	if err := c.Update(context.Background(), obj); err != nil {
		t.Fatal(err)
	}
}

func namespaceNS() *corev1.Namespace {
	ns := &corev1.Namespace{}
	ns.Name = "ns"
	return ns
}

// setContent replaces configmap/app with data, as the cache holds it.
func (f *wavesFixture) setContent(t *testing.T, data map[string]string, annotations map[string]string) {
	t.Helper()
	old := &corev1.ConfigMap{}
	if err := f.c.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "app"}, old); err != nil {
		t.Fatal(err)
	}
	cm := &corev1.ConfigMap{Data: data}
	cm.Namespace, cm.Name, cm.Annotations = "ns", "app", annotations
	cm = slimmed(t, cm)
	cm.ResourceVersion = old.ResourceVersion
	if err := f.c.Update(context.Background(), cm); err != nil {
		t.Fatal(err)
	}
}

func TestClosedWindowWaitsThenGoesWithTheNewestContent(t *testing.T) {
	f, now := windowed(t, 1)
	f.annotate(t, namespaceNS(), contract.WindowAnnotation, "Mon-Fri 09:00-17:00 Europe/Berlin")
	res, err := f.r.Reconcile(context.Background(), req("d0"))
	if err != nil {
		t.Fatal(err)
	}
	if got := f.restamped(t, 1); len(got) != 0 {
		t.Fatalf("re-stamped %v outside the window", got)
	}
	if res.RequeueAfter != windowRecheck {
		t.Errorf("looks again after %s, want %s (the window opens on Monday)", res.RequeueAfter, windowRecheck)
	}
	waits := f.drained(contract.ReasonWaitingForWindow)
	if len(waits) != 1 || !strings.Contains(waits[0], "Mon-Fri 09:00-17:00 Europe/Berlin") || !strings.Contains(waits[0], "2026-12-07T08:00:00Z") {
		t.Fatalf("WaitingForWindow events %q, want one naming the window and when it opens", waits)
	}
	if w, fz, longest := f.r.waits.counts(*now); w != 1 || fz != 0 || longest != 0 {
		t.Errorf("counts %d windows, %d freezes, longest %s; want 1, 0, 0s", w, fz, longest)
	}

	// Two more changes while it waits: only the newest content goes.
	*now = now.Add(time.Hour)
	f.setContent(t, map[string]string{"k": "v3"}, nil)
	f.reconcile(t, "d0")
	f.setContent(t, map[string]string{"k": "v4"}, nil)
	f.reconcile(t, "d0")
	if got := f.drained(contract.ReasonWaitingForWindow); len(got) != 0 {
		t.Errorf("the wait was said again: %q", got)
	}
	if _, _, longest := f.r.waits.counts(*now); longest != time.Hour {
		t.Errorf("longest wait %s, want 1h", longest)
	}

	*now = time.Date(2026, 12, 7, 8, 0, 30, 0, time.UTC)
	f.reconcile(t, "d0")
	if got, want := f.get(t, "d0").Spec.Template.Annotations[contract.ChecksumAnnotation], wantSum(t, map[string]string{"k": "v4"}); got != want {
		t.Fatalf("once the window opened d0 carries %s, want the newest content's %s", got, want)
	}
	if w, fz, _ := f.r.waits.counts(*now); w != 0 || fz != 0 {
		t.Errorf("still counted waiting after its re-stamp: %d, %d", w, fz)
	}
}

func TestUrgentSourceGoesThroughAFreeze(t *testing.T) {
	f, now := windowed(t, 1)
	f.annotate(t, namespaceNS(), contract.FreezeAnnotation, "2026-12-01/2026-12-31 Europe/Berlin")
	f.reconcile(t, "d0")
	if got := f.restamped(t, 1); len(got) != 0 {
		t.Fatalf("re-stamped %v during a freeze", got)
	}
	if _, fz, _ := f.r.waits.counts(*now); fz != 1 {
		t.Errorf("%d readers counted frozen, want 1", fz)
	}
	f.drained("")
	f.setContent(t, map[string]string{"k": "v2"}, map[string]string{contract.UrgentAnnotation: "INC-4711"})
	f.reconcile(t, "d0")
	if got := f.restamped(t, 1); len(got) != 1 {
		t.Fatal("the urgent source's change did not go through the freeze")
	}
	urgent := f.drained(contract.ReasonUrgentChange)
	if len(urgent) != 1 || !strings.Contains(urgent[0], "configmap/app") {
		t.Errorf("UrgentChange events %q, want one naming configmap/app", urgent)
	}
}

// A reader whose window is closed when a change is planned goes after the
// readers that may go now: it is not their canary, and they do not wait
// for its window.
func TestReadersOutsideTheirWindowGoLast(t *testing.T) {
	f, _ := windowed(t, 3)
	f.annotate(t, f.get(t, "d0"), contract.WindowAnnotation, "Sat 10:00-12:00 UTC")
	f.reconcile(t, "d1", "d0")
	if got := f.restamped(t, 3); len(got) != 1 || got[0] != "d1" {
		t.Fatalf("re-stamped %v, want d1 alone as the canary (d0, first by name, waits for Saturday)", got)
	}
}

func TestWindowAnnotationThatCannotBeReadIsIgnoredWithAWarning(t *testing.T) {
	f, _ := windowed(t, 1)
	f.annotate(t, f.get(t, "d0"), contract.WindowAnnotation, "weekdays 9 to 5")
	f.reconcile(t, "d0")
	if got := f.restamped(t, 1); len(got) != 1 {
		t.Fatal("a window that does not parse held the change")
	}
	if got := f.drained(contract.ReasonInvalidAnnotation); len(got) != 1 || !strings.Contains(got[0], contract.WindowAnnotation) {
		t.Errorf("InvalidAnnotation events %q, want one naming %s", got, contract.WindowAnnotation)
	}
}

// The waiting readers are counted at a scrape, by reason.
func TestWaitingReadersAreCountedByReason(t *testing.T) {
	m, err := NewMetrics(prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	w := newWindowWaits()
	m.setWaits(w)
	now := time.Now()
	w.wait(req("d0"), "window", now, false)
	w.wait(req("d1"), "freeze", now, true)
	w.wait(req("d2"), "freeze", now, true)
	if got, want := []float64{testutil.ToFloat64(m.WaitingWindow), testutil.ToFloat64(m.WaitingFreeze)}, []float64{1, 2}; !slices.Equal(got, want) {
		t.Errorf("waiting for a window, a freeze: %v, want %v", got, want)
	}
	w.done(req("d1"))
	if got := testutil.ToFloat64(m.WaitingFreeze); got != 1 {
		t.Errorf("waiting for a freeze after one is done: %v, want 1", got)
	}
}

// namespaceGets counts the reads of Namespaces through a client.
type namespaceGets struct {
	client.Client
	n int
}

func (c *namespaceGets) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if _, ok := obj.(*corev1.Namespace); ok {
		c.n++
	}
	return c.Client.Get(ctx, key, obj, opts...)
}

// TestWindowReadsTheNamespaceOnce: a reconcile of a reader waiting for its
// namespace's window reads the namespace once, for the policy and the
// window both.
func TestWindowReadsTheNamespaceOnce(t *testing.T) {
	f, _ := windowed(t, 1)
	f.annotate(t, namespaceNS(), contract.WindowAnnotation, "Mon-Fri 09:00-17:00 Europe/Berlin")
	counted := &namespaceGets{Client: f.r.client}
	f.r.client = counted
	f.reconcile(t, "d0")
	if waits := f.drained(contract.ReasonWaitingForWindow); len(waits) != 1 {
		t.Fatalf("WaitingForWindow events %q, want one: the namespace's window holds it", waits)
	}
	if counted.n != 1 {
		t.Errorf("read the namespace %d times, want once", counted.n)
	}
}
