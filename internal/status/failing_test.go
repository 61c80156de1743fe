package status

import (
	"strings"
	"testing"
	"time"

	"github.com/confighash/confighash/internal/contract"
	"github.com/confighash/confighash/internal/window"
)

// A workload the hook re-stamped while it was failing shows so, on its
// Last re-stamp line and in its reason: its rollout was not judged.
func TestFailingBeforeShown(t *testing.T) {
	since := time.Date(2026, 12, 1, 0, 12, 0, 0, time.UTC)
	cm := contract.Change{Source: "configmap/shared", Content: "0123456789abcdef"}
	r := rolloutOf(map[string]string{contract.RolloutAnnotation: sealed(contract.Rollout{Since: since, Changes: []contract.Change{cm}, Failing: "ErrImagePull"}.String())})
	if r == nil || r.Failing != "ErrImagePull" {
		t.Fatalf("rolloutOf = %+v", r)
	}
	if d := describeRollout(r, since.Add(time.Minute)); !strings.Contains(d, "failing before the change (ErrImagePull): not judged") {
		t.Errorf("describeRollout = %q", d)
	}
	w := Workload{Injection: Injection{InjectionOn, "labelled"}, StampedChecksum: "v1:aa", ExpectedChecksum: "v1:aa", Rollout: r}
	if state, reason := Classify(&w, time.Time{}, window.Cluster{}); state != StateCurrent || !strings.Contains(reason, "failing before the change (ErrImagePull)") {
		t.Errorf("Classify = %s, %q", state, reason)
	}
}
