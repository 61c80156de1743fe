package health

import (
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// argoRollout judges an Argo Rollouts Rollout by the phase its controller
// computes (rolloututil.CalculateRolloutPhase in v1.10), once it has
// observed the generation.
func argoRollout(u *unstructured.Unstructured) Verdict {
	if v, ok := notObserved(u); ok {
		return v
	}
	phase, _, _ := unstructured.NestedString(u.Object, "status", "phase")
	switch phase {
	case "Healthy":
		return succeeded(reasonUpdated, "the Rollout is Healthy")
	case "Degraded":
		return failed(degradedReason(u), "the Rollout is Degraded")
	case "Paused":
		return progressing("Paused", "the Rollout is paused")
	case "Progressing":
		return progressing("Progressing", "the Rollout is progressing")
	case "":
		return progressing("NoPhase", "the Rollout has no phase yet")
	default:
		return progressing(word(phase, "Unknown"), "the Rollout's phase is not one Argo Rollouts v1.10 writes")
	}
}

// degradedReason is one word for a Degraded Rollout. Argo Rollouts writes
// status.message as "REASON: text" (ProgressDeadlineExceeded,
// RolloutAborted, InvalidSpec); failing that, the condition that degrades
// it names the reason.
func degradedReason(u *unstructured.Unstructured) string {
	msg, _, _ := unstructured.NestedString(u.Object, "status", "message")
	if head, _, ok := strings.Cut(msg, ":"); ok && head != "" && word(head, "") == head {
		return head
	}
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		m, ok := c.(map[string]any)
		if !ok {
			continue
		}
		if t, _ := m["type"].(string); t == "InvalidSpec" {
			return "InvalidSpec"
		}
		if r, _ := m["reason"].(string); r == "ProgressDeadlineExceeded" || r == "RolloutAborted" {
			return r
		}
	}
	return "Degraded"
}
