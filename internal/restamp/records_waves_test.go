package restamp

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/confighash/confighash/internal/contract"
)

// canarySubject is the Subject of the fixture's canary, Deployment d0,
// which has no UID.
var canarySubject = contract.Subject{Kind: "Deployment", Namespace: "ns", Name: "d0"}

// TestForgedRolloutRecordsPutNoReaderInFlight: a new leader rebuilds its
// flights from the readers' rollout records; a record the hook did not
// seal for the reader it is on (written by hand, copied from the canary,
// or from a workload of the same name since deleted) must not put that
// reader in flight, where it would take a slot and its rollout would count
// for the waves, although it was never re-stamped.
func TestForgedRolloutRecordsPutNoReaderInFlight(t *testing.T) {
	f := newWavesFixture(t, 4)
	f.reconcile(t, "d0")
	canary := f.get(t, "d0").Annotations[contract.RolloutAnnotation]
	rec, err := contract.ReadRollout(hookKey, canarySubject, canary, time.Now())
	if err != nil || len(rec.Changes) != 1 {
		t.Fatalf("the canary's record %q: %+v, %v", canary, rec, err)
	}
	forged := map[string]string{
		"d1": canary, // copied from the canary
		"d2": contract.Rollout{Since: time.Now().Truncate(time.Second), Changes: rec.Changes, Read: rec.Read}.String(),
		"d3": rec.Sealed(hookKey, contract.Subject{Kind: "Deployment", Namespace: "ns", Name: "d3", UID: "an-earlier-d3"}),
	}
	for name, v := range forged {
		d := f.get(t, name)
		if d.Annotations == nil {
			d.Annotations = map[string]string{}
		}
		d.Annotations[contract.RolloutAnnotation] = v
		f.put(t, d)
	}
	// A new leader: it knows nothing but the objects.
	f.newLeader()
	f.reconcile(t, "d1")
	for _, name := range []string{"d1", "d2", "d3"} {
		if _, in := f.r.planner.inFlight(req(name)); in {
			t.Errorf("%s is in flight on a record the hook did not seal for it", name)
		}
	}
	if _, in := f.r.planner.inFlight(req("d0")); !in || !slices.Equal(f.woken, []string{"d0"}) {
		t.Errorf("the canary in flight %v, woken %v; want the canary alone, by its own record", in, f.woken)
	}
	if got := f.restamped(t, 4); !slices.Equal(got, []string{"d0"}) {
		t.Errorf("re-stamped %v; the others wait for the canary", got)
	}
}

// TestFutureRolloutRecordHidesNoCrash: a record dated far ahead would make
// every exit of the new revision look older than the change. The leader
// judges from its own time of the re-stamp, whatever the record then says,
// so a crash after the real re-stamp halts the change.
func TestFutureRolloutRecordHidesNoCrash(t *testing.T) {
	f := newWavesFixture(t, 2)
	now := t0
	f.r.now = func() time.Time { return now }
	f.r.live = f.c
	f.reconcile(t, "d0")
	restampedAt := now
	d := f.get(t, "d0")
	rec, err := contract.ReadRollout(hookKey, canarySubject, d.Annotations[contract.RolloutAnnotation], now)
	if err != nil {
		t.Fatal(err)
	}
	rec.Since = now.Add(24 * time.Hour)
	d.Annotations[contract.RolloutAnnotation] = rec.String()
	f.put(t, d)
	// The new revision's pod exited non-zero after the re-stamp and was
	// restarted.
	started := metav1.NewTime(restampedAt.Add(2 * time.Second))
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "d0-5d8f7-abcde", Namespace: "ns",
		Labels:          map[string]string{"app": "d0"},
		Annotations:     map[string]string{contract.ChecksumAnnotation: f.cur},
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "d0-5d8f7", UID: "rs", Controller: ptr.To(true)}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{{Name: "app", RestartCount: 1,
			State:                corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(restampedAt.Add(5 * time.Second))}},
			LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, StartedAt: started}}}}}}
	if err := f.c.Create(context.Background(), pod); err != nil {
		t.Fatal(err)
	}
	now = now.Add(10 * time.Second)
	f.setStatus(t, false, false)
	f.reconcile(t, "d0")
	v := f.get(t, "d0").Annotations[contract.HaltAnnotation]
	h, err := contract.ReadHalt(hookKey, canarySubject, v, now)
	if err != nil || h.Reason != "NonZeroExit" {
		t.Fatalf("halt %q: %+v, %v; want the crash to halt the change, in a sealed record", v, h, err)
	}
	if _, in := f.r.planner.inFlight(req("d0")); in {
		t.Error("still in flight after the crash")
	}
}

// TestUnverifiedHaltHaltsNoOne: a halt record the hook did not seal for
// the reader it is on (copied from the canary, from a workload of the same
// name since deleted, or written by hand) halts nothing: a new leader,
// which knows only the objects, lets the change go on to the other
// readers, re-stamps that reader in its wave, and drops the record then,
// with one InvalidAnnotation warning. Honoured, one tenant's copy would
// hold the change back from every reader of the source.
func TestUnverifiedHaltHaltsNoOne(t *testing.T) {
	f := newWavesFixture(t, 4)
	f.reconcile(t, "d0")
	rec, err := contract.ReadRollout(hookKey, canarySubject, f.get(t, "d0").Annotations[contract.RolloutAnnotation], time.Now())
	if err != nil || len(rec.Changes) != 1 {
		t.Fatalf("the canary's record: %+v, %v", rec, err)
	}
	halt := contract.Halt{Since: time.Now().Truncate(time.Second), Changes: rec.Changes, Reason: "CrashLoopBackOff"}
	for name, v := range map[string]string{
		"copied from the canary": halt.Sealed(hookKey, canarySubject),
		"an earlier d1":          halt.Sealed(hookKey, contract.Subject{Kind: "Deployment", Namespace: "ns", Name: "d1", UID: "an-earlier-d1"}),
		"written by hand":        halt.String(),
	} {
		t.Run(name, func(t *testing.T) {
			f := newWavesFixture(t, 4)
			f.reconcile(t, "d0")
			f.setStatus(t, true, false)
			d := f.get(t, "d1")
			d.Annotations = map[string]string{contract.HaltAnnotation: v}
			f.put(t, d)
			// A new leader: it knows nothing but the objects.
			f.newLeader()
			f.reconcile(t, "d1", "d0")
			f.reconcile(t, "d1", "d2", "d3")
			if got := f.restamped(t, 4); !slices.Equal(got, []string{"d0", "d1", "d2"}) {
				t.Fatalf("re-stamped %v; want the second wave after the canary, d1 in it", got)
			}
			if v, ok := f.get(t, "d1").Annotations[contract.HaltAnnotation]; ok {
				t.Errorf("d1's halt %q left after its re-stamp", v)
			}
			warnings := f.drained(contract.ReasonInvalidAnnotation)
			if len(warnings) != 1 || !strings.Contains(warnings[0], contract.HaltAnnotation) || !strings.HasSuffix(warnings[0], "it is ignored") {
				t.Errorf("warnings %q; want one, for the halt", warnings)
			}
		})
	}
}

// TestReleasedHaltNeedsNoSeal: "released" is a user's command, not a
// record: a new leader honours it on the canary whose rollout failed, and
// the change goes on.
func TestReleasedHaltNeedsNoSeal(t *testing.T) {
	f := newWavesFixture(t, 3)
	f.haltCanary(t)
	f.release(t, "d0")
	f.newLeader()
	f.reconcile(t, "d1", "d2")
	if got := f.restamped(t, 3); len(got) != 3 {
		t.Fatalf("re-stamped %v after the release, want all", got)
	}
}

// TestHaltFromBeforeSealingDropped: the cost of sealed halts on upgrade. A
// canary halted by a version that wrote halts unsealed (its rollout record
// unsealed too) halts nothing for the new leader: at its start-up replay
// the change goes on in waves, the next reader its canary, whose rollout
// is judged as any canary's (a change that still breaks halts again
// there).
func TestHaltFromBeforeSealingDropped(t *testing.T) {
	f := newWavesFixture(t, 4)
	f.reconcile(t, "d0")
	d := f.get(t, "d0")
	rec, err := contract.ReadRollout(hookKey, canarySubject, d.Annotations[contract.RolloutAnnotation], time.Now())
	if err != nil {
		t.Fatal(err)
	}
	d.Annotations[contract.RolloutAnnotation] = rec.String()
	d.Annotations[contract.HaltAnnotation] = contract.Halt{Since: rec.Since, Changes: rec.Changes, Reason: "CrashLoopBackOff"}.String()
	f.put(t, d)
	f.newLeader()
	for _, name := range []string{"d0", "d1", "d2", "d3"} {
		req := req(name)
		req.Recheck = true
		if _, err := f.r.Reconcile(context.Background(), req); err != nil {
			t.Fatalf("replay %s: %v", name, err)
		}
	}
	if got := f.restamped(t, 4); !slices.Equal(got, []string{"d0", "d1"}) {
		t.Errorf("re-stamped %v; want d1 as the next canary, the others waiting for it", got)
	}
}

// TestHaltAcrossKeyRotation: a key rotation drops every halt (sealed under
// the old key, it no longer verifies), but not the protection: the readers
// still waiting carry stamps under the old key, which the new key's replay
// keeps (KeyChanged) rather than re-stamping, until the source changes
// again.
func TestHaltAcrossKeyRotation(t *testing.T) {
	f := newWavesFixture(t, 3)
	f.haltCanary(t)
	// The new key, and a new leader.
	f.r.key = []byte("a rotated key, 32 bytes long....")
	f.r.planner = newPlanner(8, 0, func(Request) {})
	for _, name := range []string{"d0", "d1", "d2"} {
		req := req(name)
		req.Recheck = true
		if _, err := f.r.Reconcile(context.Background(), req); err != nil {
			t.Fatalf("replay %s: %v", name, err)
		}
	}
	for _, name := range []string{"d1", "d2"} {
		if got := f.get(t, name).Spec.Template.Annotations[contract.ChecksumAnnotation]; got != f.old {
			t.Errorf("%s stamped %q after the rotation; want its stamp kept", name, got)
		}
	}
	if kept := len(f.drained(contract.ReasonKeyChanged)); kept != 3 {
		t.Errorf("%d KeyChanged warnings; want one for each reader, its stamp kept", kept)
	}
}
