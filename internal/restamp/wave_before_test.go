package restamp

import (
	"slices"
	"testing"

	"github.com/confighash/confighash/internal/contract"
)

// TestFailingReaderIsNeitherCanaryNorEvidence: d0, first in the order, was
// past its progress deadline before the change. It gets the change all the
// same, at once, and its rollout is not judged: d1 is the canary, d2 waits
// for it, and d0 failing again halts nothing.
func TestFailingReaderIsNeitherCanaryNorEvidence(t *testing.T) {
	f := newWavesFixture(t, 3)
	f.setStatus(t, false, true) // d0: ProgressDeadlineExceeded, before any re-stamp
	f.reconcile(t, readerNames(3)...)
	if got := f.restamped(t, 3); !slices.Equal(got, []string{"d0", "d1"}) {
		t.Fatalf("re-stamped %v, want d0 (failing, at once) and d1, the canary", got)
	}
	d0 := f.get(t, "d0")
	rec, err := contract.ParseRollout(contract.Unsealed(d0.Annotations[contract.RolloutAnnotation]))
	if err != nil || rec.Failing != "ProgressDeadlineExceeded" {
		t.Fatalf("d0's record %+v, %v: want failing=ProgressDeadlineExceeded", rec, err)
	}
	// d0 fails on: no halt, and d2 still waits for the canary d1.
	f.reconcile(t, "d0")
	if h := f.get(t, "d0").Annotations[contract.HaltAnnotation]; h != "" {
		t.Fatalf("d0, failing before the change, halted it: %s", h)
	}
	f.reconcile(t, "d2")
	if got := f.restamped(t, 3); !slices.Equal(got, []string{"d0", "d1"}) {
		t.Fatalf("re-stamped %v while the canary d1 rolls", got)
	}
}
