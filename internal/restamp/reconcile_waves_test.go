package restamp

import (
	"context"
	"fmt"
	"slices"
	"strings"
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

// wavesFixture: three Deployments of one replica read configmap/app, which
// changed from v1 to v2; their stamps are of v1.
type wavesFixture struct {
	c      client.Client
	r      *reconciler
	events *events.FakeRecorder
	woken  []string
	old    string
	cur    string
}

func newWavesFixture(t *testing.T, readers int) *wavesFixture {
	return newWavesFixtureOf(t, readers, 1)
}

func newWavesFixtureOf(t *testing.T, readers int, replicas int32) *wavesFixture {
	t.Helper()
	f := &wavesFixture{old: wantSum(t, map[string]string{"k": "v1"}), cur: wantSum(t, map[string]string{"k": "v2"})}
	ns := servedNS()
	cm := slimCM(t, "ns", "app", map[string]string{"k": "v2"})
	objs := []client.Object{ns, cm}
	for i := range readers {
		d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("d%d", i), Namespace: "ns", Generation: 1}}
		d.Spec.Replicas = ptr.To(replicas)
		d.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": d.Name}}
		d.Spec.Template.Labels = map[string]string{"app": d.Name}
		d.Spec.Template.Spec = envFromCM("app")
		d.Spec.Template.Annotations = map[string]string{contract.ChecksumAnnotation: f.old}
		objs = append(objs, d)
	}
	f.c = withReadersIndex(fake.NewClientBuilder()).WithObjects(objs...).Build()
	f.r, f.events = testReconciler(t, f.c, newFlapGuard(DefaultOptions(), 100), time.Now)
	f.newLeader()
	f.r.rollouts = rolloutOptions{timeout: 15 * time.Minute, poll: rolloutPoll}
	return f
}

// reconcile reconciles the readers named, one after the other.
func (f *wavesFixture) reconcile(t *testing.T, names ...string) {
	t.Helper()
	for _, name := range names {
		if _, err := f.r.Reconcile(context.Background(), req(name)); err != nil {
			t.Fatalf("reconcile %s: %v", name, err)
		}
	}
}

// readerNames are the names of the fixture's first n readers.
func readerNames(n int) []string {
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("d%d", i)
	}
	return names
}

// haltCanary re-stamps d0, the canary, fails its rollout at the deadline,
// and checks that d0 then carries a halt the hook sealed.
func (f *wavesFixture) haltCanary(t *testing.T) {
	t.Helper()
	f.reconcile(t, "d0")
	f.setStatus(t, false, true)
	f.reconcile(t, "d0")
	if _, err := contract.ReadHalt(hookKey, canarySubject, f.get(t, "d0").Annotations[contract.HaltAnnotation], time.Now()); err != nil {
		t.Fatalf("the canary's halt: %v", err)
	}
}

// secondWaveGoes reconciles the canary d0, of three readers, after what
// lets the change go on, and checks that it wakes d1 and d2 and that
// they are re-stamped.
func (f *wavesFixture) secondWaveGoes(t *testing.T, after string) {
	t.Helper()
	f.reconcile(t, "d0")
	if !slices.Equal(f.woken, []string{"d1", "d2"}) {
		t.Fatalf("after %s: woke %v, want the second wave", after, f.woken)
	}
	f.reconcile(t, "d1", "d2")
	if got := f.restamped(t, 3); len(got) != 3 {
		t.Fatalf("re-stamped %v after %s, want all", got, after)
	}
}

// release sets the halt on reader name to contract.HaltReleased, as a
// user does.
func (f *wavesFixture) release(t *testing.T, name string) {
	t.Helper()
	d := f.get(t, name)
	d.Annotations[contract.HaltAnnotation] = contract.HaltReleased
	f.put(t, d)
}

func (f *wavesFixture) get(t *testing.T, name string) *appsv1.Deployment {
	t.Helper()
	d := &appsv1.Deployment{}
	if err := f.c.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: name}, d); err != nil {
		t.Fatal(err)
	}
	return d
}

// newLeader gives the reconciler a planner that knows nothing, as a new
// leader's, and forgets who was woken.
func (f *wavesFixture) newLeader() {
	f.woken = nil
	f.r.planner = newPlanner(8, 0, func(r Request) { f.woken = append(f.woken, r.Name) })
}

// put writes d, changed by the test, back to the cluster.
func (f *wavesFixture) put(t *testing.T, d *appsv1.Deployment) {
	t.Helper()
	if err := f.c.Update(context.Background(), d); err != nil {
		t.Fatal(err)
	}
}

// drained empties the recorder and returns the events that mention reason.
func (f *wavesFixture) drained(reason string) []string { return drainEvents(f.events, reason) }

// restamped lists the readers whose stamp is the new content's.
func (f *wavesFixture) restamped(t *testing.T, n int) []string {
	var got []string
	for i := range n {
		name := fmt.Sprintf("d%d", i)
		if f.get(t, name).Spec.Template.Annotations[contract.ChecksumAnnotation] == f.cur {
			got = append(got, name)
		}
	}
	return got
}

// setStatus writes what the Deployment controller would once the new
// revision is (rolledOut) or is not yet available, or past its deadline.
func (f *wavesFixture) setStatus(t *testing.T, rolledOut bool, deadline bool) {
	t.Helper()
	d := f.get(t, "d0")
	d.Status = appsv1.DeploymentStatus{ObservedGeneration: d.Generation, Replicas: 1}
	if rolledOut {
		d.Status.UpdatedReplicas, d.Status.ReadyReplicas, d.Status.AvailableReplicas = 1, 1, 1
		d.Status.Conditions = []appsv1.DeploymentCondition{
			{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue},
			{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionTrue, Reason: "NewReplicaSetAvailable"},
		}
	}
	if deadline {
		d.Status.Conditions = []appsv1.DeploymentCondition{
			{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionFalse, Reason: "ProgressDeadlineExceeded"}}
	}
	if err := f.c.Status().Update(context.Background(), d); err != nil {
		t.Fatal(err)
	}
}

func TestReconcileWavesWaitForTheCanary(t *testing.T) {
	f := newWavesFixture(t, 3)
	f.reconcile(t, readerNames(3)...)
	if got := f.restamped(t, 3); !slices.Equal(got, []string{"d0"}) {
		t.Fatalf("re-stamped %v, want the canary d0 only", got)
	}
	rec, err := contract.ParseRollout(f.get(t, "d0").Annotations[contract.RolloutAnnotation])
	if err != nil || len(rec.Changes) != 1 || rec.Changes[0].Source != "configmap/app" || len(rec.Read) != 1 {
		t.Fatalf("d0's rollout record %+v, %v", rec, err)
	}
	// Its rollout is still going: the others wait.
	f.setStatus(t, false, false)
	f.reconcile(t, "d0", "d1")
	if got := f.restamped(t, 3); !slices.Equal(got, []string{"d0"}) {
		t.Fatalf("re-stamped %v while the canary rolls", got)
	}
	// It rolled out: the next wave is woken and goes.
	f.setStatus(t, true, false)
	f.secondWaveGoes(t, "the canary rolled out")
}

func TestReconcileWavesHaltAtTheDeadline(t *testing.T) {
	f := newWavesFixture(t, 3)
	f.reconcile(t, readerNames(3)...)
	f.setStatus(t, false, true)
	f.reconcile(t, "d0")
	h, err := contract.ParseHalt(f.get(t, "d0").Annotations[contract.HaltAnnotation])
	if err != nil || h.Reason != "ProgressDeadlineExceeded" || len(h.Changes) != 1 || h.Changes[0].Source != "configmap/app" {
		t.Fatalf("d0's halt %+v, %v", h, err)
	}
	f.reconcile(t, "d1", "d2", "d1")
	if got := f.restamped(t, 3); !slices.Equal(got, []string{"d0"}) {
		t.Fatalf("re-stamped %v after the halt, want the canary only", got)
	}
	halted := f.drained(contract.ReasonRolloutHalted)
	// One on the workload, one on the ConfigMap; neither names a value.
	if len(halted) != 2 {
		t.Fatalf("RolloutHalted events %q, want 2", halted)
	}
	for _, e := range halted {
		if !strings.HasPrefix(e, "Warning RolloutHalted") || strings.Contains(e, "v2") {
			t.Errorf("event %q", e)
		}
	}
	// A user releases the halt: the waves go on.
	f.release(t, "d0")
	f.secondWaveGoes(t, "the release")
}

func TestReconcileWavesOffOnTheSource(t *testing.T) {
	f := newWavesFixture(t, 3)
	cm := &corev1.ConfigMap{}
	if err := f.c.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "app"}, cm); err != nil {
		t.Fatal(err)
	}
	cm.Annotations[contract.WavesAnnotation] = contract.WavesOff
	if err := f.c.Update(context.Background(), cm); err != nil {
		t.Fatal(err)
	}
	f.reconcile(t, readerNames(3)...)
	if got := f.restamped(t, 3); len(got) != 3 {
		t.Fatalf("re-stamped %v with waves off on the source, want all at once", got)
	}
}

// Readers of 0 replicas start no pod: each counts as rolled out once
// written, so the waves go one after another without waiting for any
// controller.
func TestReconcileWavesOfNothingToRun(t *testing.T) {
	f := newWavesFixtureOf(t, 4, 0)
	f.reconcile(t, readerNames(4)...)
	if got := f.restamped(t, 4); len(got) != 4 {
		t.Fatalf("re-stamped %v, want all four without any status", got)
	}
}

// A reader that starts no pod is in no wave: it is re-stamped at once, and
// the canary is the first reader that runs pods. (Were it a member, a
// 0-replica canary would pass at once and let the next wave of readers with
// pods go unproven.)
func TestReconcileWavesLeaveOutReadersWithNothingToRun(t *testing.T) {
	t.Run("light first", func(t *testing.T) {
		f := newWavesFixture(t, 4)
		f.scale(t, "d0", 0)
		f.reconcile(t, readerNames(4)...)
		if got := f.restamped(t, 4); !slices.Equal(got, []string{"d0", "d1"}) {
			t.Errorf("re-stamped %v, want [d0 d1]: d0 at once, d1 the canary", got)
		}
	})
	t.Run("light after the canary", func(t *testing.T) {
		f := newWavesFixture(t, 4)
		for _, name := range []string{"d1", "d2", "d3"} {
			f.scale(t, name, 0)
		}
		f.reconcile(t, readerNames(4)...)
		if got := f.restamped(t, 4); len(got) != 4 {
			t.Errorf("re-stamped %v, want all four: the canary d0 in flight, the others at once", got)
		}
	})
}

func (f *wavesFixture) scale(t *testing.T, name string, replicas int32) {
	t.Helper()
	d := f.get(t, name)
	d.Spec.Replicas = ptr.To(replicas)
	f.put(t, d)
}

// TestReconcileWavesCanaryNoLongerServed: the canary's namespace stops
// being served while it rolls, so the cache holds its identity only (no
// status): it holds up no wave and halts nothing, rather than timing out.
func TestReconcileWavesCanaryNoLongerServed(t *testing.T) {
	f := newWavesFixture(t, 3)
	f.reconcile(t, readerNames(3)...)
	if got := f.restamped(t, 3); !slices.Equal(got, []string{"d0"}) {
		t.Fatalf("re-stamped %v, want the canary d0 only", got)
	}
	kind, ok := f.r.kinds.get("Deployment")
	if !ok {
		t.Fatal("no Deployment kind")
	}
	id := kind.IdentityObject(f.get(t, "d0"))
	if err := f.c.Update(context.Background(), id); err != nil {
		t.Fatal(err)
	}
	f.reconcile(t, "d0")
	if !slices.Equal(f.woken, []string{"d1", "d2"}) {
		t.Fatalf("woke %v, want the second wave once the canary's namespace is no longer served", f.woken)
	}
}
