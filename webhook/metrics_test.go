package webhook

import "testing"

// The label values are public: dashboards and alerts select on them and
// docs/metrics.md lists them, so renaming one is a breaking change, noted in
// CHANGELOG.md.
func TestLabelValuesArePublic(t *testing.T) {
	for _, tc := range []struct{ got, want string }{
		{string(answerStamped), "stamped"},
		{string(answerRestored), "restored"},
		{string(answerUnchanged), "unchanged"},
		{string(answerError), "error"},
		{string(answerUnauthenticated), "unauthenticated"},
		{refusedTooLarge, "too_large"},
		{refusedBusy, "busy"},
		{refusedNoBuffer, "no_buffer"},
		{refusedIncomplete, "incomplete"},
		{refusedConnections, "connections"},
	} {
		if tc.got != tc.want {
			t.Errorf("label value %q, want %q", tc.got, tc.want)
		}
	}
}
