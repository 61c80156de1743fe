package status

import (
	"strings"
	"testing"
	"time"

	"github.com/confighash/confighash/internal/contract"
	"github.com/confighash/confighash/internal/window"
)

// sealed gives v a well-formed seal, as the hook writes: status has no key
// and cannot tell it from a real one, which is the point of showing it
// unverified.
func sealed(v string) string { return v + " mac=" + strings.Repeat("0", 64) }

// TestRecordsSealedOrNot: status shows what a sealed record says, marked
// unverified; a rollout or hold record without a seal, which the hook
// ignores, as ignored (so an unsealed hold does not make the workload
// held), and a halt without one too (so it holds back no reader).
func TestRecordsSealedOrNot(t *testing.T) {
	since := time.Date(2026, 12, 1, 0, 12, 0, 0, time.UTC)
	cm := contract.Change{Source: "configmap/shared", Content: "0123456789abcdef"}
	hold := contract.Hold{Since: since, Level: 1, Quiet: 2 * time.Minute}.String()
	rollout := contract.Rollout{Since: since, Changes: []contract.Change{cm}}.String()
	halt := contract.Halt{Since: since, Changes: []contract.Change{cm}, Reason: "CrashLoopBackOff"}.String()

	if h := holdOf(map[string]string{contract.HoldAnnotation: sealed(hold)}, time.Now()); h == nil || !h.Sealed || h.Error != "" ||
		!strings.HasSuffix(describeHold(h), "(sealed, unverified)") {
		t.Errorf("a sealed hold: %+v, %q", h, describeHold(h))
	}
	h := holdOf(map[string]string{contract.HoldAnnotation: hold}, time.Now())
	if h == nil || h.Sealed || !strings.HasPrefix(describeHold(h), "ignored: not sealed") {
		t.Errorf("an unsealed hold: %+v", h)
	}
	w := &Workload{Injection: Injection{State: InjectionOn}, StampedChecksum: "v2:k:00", ExpectedChecksum: "v2:k:11", Hold: h}
	if state, reason := Classify(w, time.Time{}, window.Cluster{}); state != StateStale {
		t.Errorf("an unsealed hold on a stale workload: %s (%s), want stale: the hook re-stamps it", state, reason)
	}

	if r := rolloutOf(map[string]string{contract.RolloutAnnotation: rollout}); r == nil || r.Sealed || !strings.HasPrefix(describeRollout(r, since), "ignored: not sealed") {
		t.Errorf("an unsealed rollout record: %+v", r)
	}
	if r := rolloutOf(map[string]string{contract.RolloutAnnotation: sealed(rollout)}); r == nil || !r.Sealed || len(r.Changes) != 1 ||
		!strings.HasSuffix(describeRollout(r, since), "(sealed, unverified)") {
		t.Errorf("a sealed rollout record: %+v", r)
	}

	hl := haltOf(map[string]string{contract.HaltAnnotation: halt}, time.Now())
	if hl.InForce() || hl.Sealed || !strings.HasPrefix(describeHalt(hl), "ignored: not sealed") {
		t.Errorf("an unsealed halt: %+v, %q", hl, describeHalt(hl))
	}
	w = &Workload{Injection: Injection{State: InjectionOn}, StampedChecksum: "v2:k:00", ExpectedChecksum: "v2:k:00", Halt: hl}
	if state, reason := Classify(w, time.Time{}, window.Cluster{}); state != StateCurrent || !strings.Contains(reason, "the hook ignores it") {
		t.Errorf("an unsealed halt on a current workload: %s (%s), want current, the halt said to be ignored", state, reason)
	}
	if hl := haltOf(map[string]string{contract.HaltAnnotation: sealed(halt)}, time.Now()); !hl.InForce() || !hl.Sealed || !strings.HasSuffix(describeHalt(hl), "(sealed, unverified)") {
		t.Errorf("a sealed halt: %+v", hl)
	}
}
