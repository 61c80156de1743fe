package contract

// EventSource is the reportingController of every Event confighash writes
// (the name its event recorders are created with), so that `confighash
// status` can tell them from anyone else's Events with the same reasons.
const EventSource = "confighash"

// Reasons of the Events the config-update hook writes. `confighash status`
// reads ConfigChanged, FlapHold and SourceMissing back.
const (
	// ReasonConfigChanged (Normal): the hook re-stamped the workload (it
	// rolls); the message names the changed sources, never values.
	ReasonConfigChanged = "ConfigChanged"
	// ReasonFlapHold (Warning): the workload was re-stamped too often and is
	// held (see HoldAnnotation).
	ReasonFlapHold = "FlapHold"
	// ReasonSourceMissing (Warning): a required source is missing; not
	// rolled until it exists.
	ReasonSourceMissing = "SourceMissing"
	// ReasonSourceTooLarge (Warning): a source has more keys than confighash
	// holds (--max-source-keys); not re-stamped.
	ReasonSourceTooLarge = "SourceTooLarge"
	// ReasonInvalidAnnotation (Warning): the workload's
	// CoalesceWindowAnnotation or RolloutOrderAnnotation cannot be used as
	// it is, or one of its records (RolloutAnnotation, HaltAnnotation,
	// HoldAnnotation) is not sealed for it, too long or dated ahead.
	ReasonInvalidAnnotation = "InvalidAnnotation"
	// ReasonKindNotWatched (Warning), on confighash's own pod: the hook
	// refuses to watch a custom kind whose template path leads nowhere in
	// the CRD's schema; its objects are stamped but not re-stamped.
	ReasonKindNotWatched = "KindNotWatched"
	// ReasonRolloutHalted (Warning), on the source and on the workload: the
	// workload's rollout for the source's change failed (a new pod crash-
	// loops or cannot start, the progress deadline, --rollout-timeout), so
	// the change goes to no further reader until the source changes again
	// or the halt is released (see HaltAnnotation).
	ReasonRolloutHalted = "RolloutHalted"
	// ReasonFailingBefore (Warning), on the workload: it was failing before
	// a change reached it (a pod that cannot start, a crash loop, the
	// progress deadline); it was re-stamped all the same, but its rollout
	// is not judged: it is not the change's canary and halts nothing.
	ReasonFailingBefore = "FailingBefore"
	// ReasonRolledBack (Warning), on the workload: it was put back on an
	// earlier revision whose pods read that revision's pinned config
	// (HaltRolledBack); it is not rolled forward until a source it reads
	// changes again or the halt is released.
	ReasonRolledBack = "RolledBack"
	// ReasonWaitingForWindow (Normal), on the workload: a change of its
	// config waits for a rollout window to open or a freeze to end
	// (WindowAnnotation, FreezeAnnotation); the message says which and
	// when it may start. Said once per wait.
	ReasonWaitingForWindow = "WaitingForWindow"
	// ReasonUrgentChange (Warning), on the workload: a changed source is
	// marked UrgentAnnotation, so its change goes through closed windows
	// and freezes; the message names the source, the note and the field
	// manager that set it.
	ReasonUrgentChange = "UrgentChange"
)

// Reasons of the Events on the HMAC key Secret, and on workloads stamped
// under another key. They name key IDs and sizes, never key bytes.
const (
	// ReasonKeyChanged (Warning) is used twice, for the two ends of one key
	// change. On the key Secret: it holds a new valid key, and a replica
	// restarts onto it after its delay. On a workload: its stamp was made
	// under another key; the hook keeps it until the workload's config
	// next changes.
	ReasonKeyChanged = "KeyChanged"
	// ReasonKeyRestored (Warning), on the key Secret: it was deleted while
	// confighash ran, and a replica put the key in use back.
	ReasonKeyRestored = "KeyRestored"
	// ReasonKeyInvalid (Warning), on the key Secret: it holds no usable key;
	// running replicas keep theirs, one that starts now fails.
	ReasonKeyInvalid = "KeyInvalid"
)

// Reasons of the Events the pod webhook writes when pinning is on.
const (
	// ReasonPodUnpinned (Warning), on the pod's workload (its controller
	// when the workload is not known): a pod was admitted unpinned and
	// reads the live ConfigMaps and Secrets; the message says why. At most
	// one per workload and reason in a while, whatever the pods.
	ReasonPodUnpinned = "PodUnpinned"
)

// Event types, as corev1.EventTypeNormal and corev1.EventTypeWarning spell
// them (this package imports the standard library only).
const (
	eventNormal  = "Normal"
	eventWarning = "Warning"
)

// EventOf returns the type ("Normal" or "Warning") of the Events with
// reason and the objects they are on, as docs/operations.md's Event table
// shows them; ok is false for a reason not declared here.
func EventOf(reason string) (eventType, on string, ok bool) {
	switch reason {
	case ReasonConfigChanged, ReasonWaitingForWindow:
		return eventNormal, "workload", true
	case ReasonFlapHold, ReasonSourceMissing, ReasonSourceTooLarge, ReasonInvalidAnnotation, ReasonFailingBefore, ReasonRolledBack, ReasonUrgentChange:
		return eventWarning, "workload", true
	case ReasonKeyChanged:
		return eventWarning, "workload, key Secret", true
	case ReasonKeyRestored, ReasonKeyInvalid:
		return eventWarning, "key Secret", true
	case ReasonKindNotWatched:
		return eventWarning, "confighash's pod", true
	case ReasonRolloutHalted:
		return eventWarning, "workload, ConfigMap or Secret", true
	case ReasonPodUnpinned:
		return eventWarning, "workload", true
	}
	return "", "", false
}
