package workload

// EventSource is the reportingController of every Event confighash writes
// (the name its event recorders are created with), so that `confighash
// status` can tell them from anyone else's Events with the same reasons.
const EventSource = "confighash"

// Reasons of the Events the config-update hook writes on workloads, read
// back by `confighash status`.
const (
	// ReasonConfigChanged: the hook re-stamped the workload (it rolls).
	ReasonConfigChanged = "ConfigChanged"
	// ReasonFlapHold: the workload was re-stamped too often and is held.
	ReasonFlapHold = "FlapHold"
	// ReasonSourceMissing: a required source is missing; not rolled.
	ReasonSourceMissing = "SourceMissing"
	// ReasonSourceTooLarge: a source has more keys than confighash holds
	// (--max-source-keys); not re-stamped.
	ReasonSourceTooLarge = "SourceTooLarge"
)
