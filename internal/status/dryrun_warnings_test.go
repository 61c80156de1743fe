package status

import (
	"slices"
	"testing"

	"github.com/confighash/confighash/internal/workload"
)

// The filter and the webhook share workload.Warning: a reworded prefix on
// either side would drop every confighash warning from the report.
func TestConfighashWarnings(t *testing.T) {
	ours := workload.Warning("required sources missing: ConfigMap/cfg")
	got := confighashWarnings([]string{"policy: image not pinned", ours, "confighash kept", ""})
	if want := []string{ours}; !slices.Equal(got, want) {
		t.Errorf("confighashWarnings = %q, want %q", got, want)
	}
}
