package health

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
)

// fromKstatus maps kstatus' answer for u: Current is a candidate
// Succeeded (the soak follows), InProgress is Progressing, Failed is
// Failed, and Unknown or Terminating are Progressing. trustMessage says
// whether kstatus' message may be shown: for the built-in kinds it is made
// of counts; for custom kinds it is a controller's free text, which could
// quote config, so only the reason is kept.
func fromKstatus(u *unstructured.Unstructured, trustMessage bool) Verdict {
	res, err := status.Compute(u)
	if err != nil {
		// The error can quote the field it could not read: not shown.
		return progressing("StatusUnreadable", "kstatus cannot read the status")
	}
	reason := ""
	if len(res.Conditions) > 0 {
		reason = res.Conditions[0].Reason
	}
	msg := res.Message
	if !trustMessage {
		msg = fmt.Sprintf("kstatus: %s (%s)", res.Status, word(reason, "no reason"))
	}
	switch res.Status {
	case status.CurrentStatus:
		return succeeded(reasonUpdated, "%s", msg)
	case status.FailedStatus:
		return failed(word(reason, "Stalled"), "%s", msg)
	case status.InProgressStatus:
		return progressing(word(reason, "InProgress"), "%s", msg)
	default:
		return progressing(word(string(res.Status), "Unknown"), "%s", msg)
	}
}
