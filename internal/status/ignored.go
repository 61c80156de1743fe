package status

import (
	"strings"

	"github.com/confighash/confighash/internal/contract"
)

// ignoredReason explains a stamp that differs from what the sources give
// now in a workload that reads an ignored source, or returns "" when it
// reads none. The hook keeps such a stamp until a source that counts
// changes (internal/restamp/check_ignored.go): adding or removing the ignore annotation,
// and an ignored source's changes, must roll nothing, and either leaves a
// stamp that differs. A source that counts and changes is re-stamped by
// the hook within its coalescing window, so a difference that lasts is the
// ignore annotation's; status has no key to tell more, and says so.
func ignoredReason(w *Workload) (State, string) {
	if w.StampedChecksum == "" {
		return "", ""
	}
	var ignored []string
	for i := range w.Sources {
		if s := &w.Sources[i]; s.Ignored && s.Presence == Present {
			ignored = append(ignored, s.Ref())
		}
	}
	if len(ignored) == 0 {
		return "", ""
	}
	return StateCurrent, "the stamp differs from what the sources give now because " + strings.Join(ignored, ", ") +
		" " + pluralize(len(ignored), "is", "are") + " ignored (" + contract.IgnoreAnnotation + ") and " +
		pluralize(len(ignored), "its", "their") + " annotation or content changed since it was made; " +
		"the hook keeps it until a source that counts changes"
}
