package restamp

import (
	"context"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/confighash/confighash/hasher"
	"github.com/confighash/confighash/internal/contract"
	"github.com/confighash/confighash/internal/sources"
	"github.com/confighash/confighash/internal/waves"
)

// rollBack puts on d0 the halt the webhook records for a rollback: sealed
// for it, naming the content its ConfigMap holds now.
func (f *wavesFixture) rollBack(t *testing.T) {
	t.Helper()
	d := f.get(t, "d0")
	spec := envFromCM("app")
	refs, _ := hasher.References(&spec, nil)
	ids, err := waves.ContentIDs(hookKey, "ns", refs, sources.Reader{Cache: f.c}.Lookup(context.Background(), "ns"))
	if err != nil {
		t.Fatal(err)
	}
	h := contract.Halt{Since: time.Now().UTC().Truncate(time.Second), Changes: waves.ChangesOf(ids), Reason: waves.RolledBack}
	if d.Annotations == nil {
		d.Annotations = map[string]string{}
	}
	d.Annotations[contract.HaltAnnotation] = h.Sealed(hookKey, subjectOf("Deployment", d))
	f.put(t, d)
}

// TestRolledBackReaderStays: a reader rolled back (its stamp names older
// content than its ConfigMap holds, and it carries the webhook's RolledBack
// halt) is not rolled forward by a re-check, a restart's replay included,
// with or without waves; a RolledBack warning says why. A release rolls it
// forward at once; so does the next change of its ConfigMap (the fix), and
// the halt goes with that re-stamp. Put forward by hand (an undo of the
// undo), its halt goes too.
func TestRolledBackReaderStays(t *testing.T) {
	recheck := Request{KindName: "Deployment", NamespacedName: types.NamespacedName{Namespace: "ns", Name: "d0"}, Recheck: true}
	stamp := func(f *wavesFixture) string {
		return f.get(t, "d0").Spec.Template.Annotations[contract.ChecksumAnnotation]
	}
	for _, withWaves := range []bool{false, true} {
		t.Run(map[bool]string{false: "no waves", true: "waves"}[withWaves], func(t *testing.T) {
			newFixture := func(t *testing.T) *wavesFixture {
				f := newWavesFixture(t, 1)
				if !withWaves {
					f.r.planner = nil
				}
				f.rollBack(t)
				return f
			}
			t.Run("kept", func(t *testing.T) {
				f := newFixture(t)
				if _, err := f.r.Reconcile(context.Background(), recheck); err != nil {
					t.Fatal(err)
				}
				if got := stamp(f); got != f.old {
					t.Fatalf("the rolled-back reader was re-stamped to %s", got)
				}
				select {
				case e := <-f.events.Events:
					if !strings.Contains(e, contract.ReasonRolledBack) {
						t.Errorf("event %q, want %s", e, contract.ReasonRolledBack)
					}
				default:
					t.Error("no RolledBack event")
				}
			})
			t.Run("released", func(t *testing.T) {
				f := newFixture(t)
				f.release(t, "d0")
				if _, err := f.r.Reconcile(context.Background(), recheck); err != nil {
					t.Fatal(err)
				}
				if got := stamp(f); got != f.cur {
					t.Fatalf("released, the reader has %s, want the current %s", got, f.cur)
				}
			})
			t.Run("put forward again by hand", func(t *testing.T) {
				f := newFixture(t)
				d := f.get(t, "d0")
				d.Spec.Template.Annotations[contract.ChecksumAnnotation] = f.cur
				f.put(t, d)
				if _, err := f.r.Reconcile(context.Background(), recheck); err != nil {
					t.Fatal(err)
				}
				if h := f.get(t, "d0").Annotations[contract.HaltAnnotation]; h != "" {
					t.Errorf("current again, the reader keeps the rollback's halt %q", h)
				}
			})
			t.Run("the fix", func(t *testing.T) {
				f := newFixture(t)
				f.setData(t, map[string]string{"k": "v3"})
				live := Request{KindName: "Deployment", NamespacedName: recheck.NamespacedName}
				f.r.changes.add(live, "configmap/app")
				for i := range 2 {
					// The first may lose the optimistic lock to the removal
					// of the obsolete halt; the queue retries it at once.
					if _, err := f.r.Reconcile(context.Background(), live); err != nil && i > 0 {
						t.Fatal(err)
					}
				}
				if got := stamp(f); got != wantSum(t, map[string]string{"k": "v3"}) {
					t.Fatalf("after the fix the reader has %s", got)
				}
				if h := f.get(t, "d0").Annotations[contract.HaltAnnotation]; h != "" {
					t.Errorf("the rollback's halt is still there after the fix: %q", h)
				}
			})
		})
	}
}
