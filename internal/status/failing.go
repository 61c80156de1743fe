package status

// failingNote says, after a rollout record or a reason, that the hook
// re-stamped the workload while it was failing, and so did not judge that
// rollout (docs/waves.md, "A reader failing before the change"); "" when
// it was not failing.
func failingNote(reason string) string {
	if reason == "" {
		return ""
	}
	return " failing before the change (" + reason + "): not judged, it halted nothing"
}
