package health

import "fmt"

// State is where one workload's rollout of its current pod template stands.
type State int

const (
	// Progressing means the rollout is under way, or cannot be judged yet (the
	// controller has not observed the generation, the status is unknown,
	// the new pods are soaking). The caller waits, up to its own timeout.
	Progressing State = iota
	// Succeeded means the new revision is out and has soaked, or there is
	// nothing to wait for (see the package doc).
	Succeeded
	// Failed means a new-revision pod crashed or cannot start, or the kind's
	// controller gave up (its progress deadline, a stalled or degraded
	// status).
	Failed
)

// String gives "progressing", "succeeded" or "failed".
func (s State) String() string {
	switch s {
	case Progressing:
		return "progressing"
	case Succeeded:
		return "succeeded"
	case Failed:
		return "failed"
	default:
		return fmt.Sprintf("state(%d)", int(s))
	}
}

// Verdict is Judge's answer.
type Verdict struct {
	State State
	// Reason is one word, no spaces: "CrashLoopBackOff",
	// "ProgressDeadlineExceeded", "Paused", "NoReplicas", "Soaking",
	// "Updated", ...
	Reason string
	// Message is short, for logs and status. It is written here from
	// names and counts, never copied from a pod or a controller's free
	// text, so it carries no config value.
	Message string
}

func progressing(reason, format string, args ...any) Verdict {
	return Verdict{State: Progressing, Reason: word(reason, "InProgress"), Message: fmt.Sprintf(format, args...)}
}

func succeeded(reason, format string, args ...any) Verdict {
	return Verdict{State: Succeeded, Reason: word(reason, "Updated"), Message: fmt.Sprintf(format, args...)}
}

func failed(reason, format string, args ...any) Verdict {
	return Verdict{State: Failed, Reason: word(reason, "Failed"), Message: fmt.Sprintf(format, args...)}
}

// word keeps the letters and digits of a reason taken from a controller's
// status, so that Reason is always one word; fallback when none remain.
func word(s, fallback string) string {
	out := make([]rune, 0, len(s))
	for _, r := range s {
		if (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9') {
			out = append(out, r)
		}
	}
	if len(out) == 0 {
		return fallback
	}
	if len(out) > 64 {
		out = out[:64]
	}
	return string(out)
}
