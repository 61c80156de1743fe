package preview

import "time"

// SchemaVersion identifies the JSON layout of Report. Fields may be added
// under the same version; renaming or removing one needs a new version.
const SchemaVersion = "preview.confighash.dev/v1"

// Report is the preview of one change: who rolls, in which wave, and who
// reads the source but does not roll, and why. It names keys, never values
// or digests.
type Report struct {
	SchemaVersion string `json:"schemaVersion"`
	// Source is "configmap/NAME" or "secret/NAME", in Namespace.
	Source    string `json:"source"`
	Namespace string `json:"namespace"`
	// Create: the source does not exist yet; applying the input creates it.
	Create bool `json:"create"`
	// Served and ServedReason are the injection policy's answer for the
	// namespace: a namespace not served rolls nothing.
	Served       bool   `json:"served"`
	ServedReason string `json:"servedReason"`
	// ChangedKeys are the source's keys whose value changes, whoever reads
	// them.
	ChangedKeys []KeyChange `json:"changedKeys"`
	// MaxWaveSize is the cap the waves were cut with.
	MaxWaveSize int `json:"maxWaveSize"`
	// Waves is how many waves the rolling readers take (those that roll at
	// once are in none).
	Waves int `json:"waves"`
	// Rolling are the readers whose checksum changes, in the order the hook
	// takes them: those that roll at once first, then wave by wave.
	Rolling []Rolling `json:"rolling"`
	// NotRolling are the readers that do not roll, with why, in the same
	// order.
	NotRolling []NotRolling `json:"notRolling"`
	// Notes are about the change as a whole (it creates the source, the
	// source is ignored, ...).
	Notes []string `json:"notes,omitempty"`
}

// Workload names a reader.
type Workload struct {
	// Ref is "kind/name" (kind lower-case, as status writes it).
	Ref string `json:"workload"`
	// Kind is the kind's registry name (a custom kind's qualified by its
	// group).
	Kind string `json:"kind"`
	Name string `json:"name"`
	// Order is its confighash.dev/rollout-order (0 when unset or invalid).
	Order int `json:"order"`
}

// Rolling is a reader that rolls.
type Rolling struct {
	Workload
	// Wave counts from 1; 0 when AtOnce.
	Wave int `json:"wave"`
	// AtOnce: the reader or the source carries confighash.dev/waves=off,
	// or the reader starts no pod (NoPod), so it is re-stamped at once,
	// outside the waves.
	AtOnce bool `json:"atOnce"`
	// NoPod, when set, is why a re-stamp of it starts no pod (NoReplicas,
	// Paused, CronJob, OnDelete, ...).
	NoPod string `json:"noPod,omitempty"`
	// Failing, when set, is why it is failing before the change
	// (ErrImagePull, CrashLoopBackOff, ProgressDeadlineExceeded, ...): it
	// is re-stamped at once, never the canary, and its rollout is not
	// judged (docs/waves.md).
	Failing string `json:"failing,omitempty"`
	// Keys are the keys it reads that change; empty when only the
	// source's existence does (it is created), or when it rolls for Reason.
	Keys []KeyChange `json:"keys"`
	// Reason is why it rolls although none of the keys it reads changes
	// (it is not stamped yet, say); "" otherwise.
	Reason string `json:"reason,omitempty"`
	// Pinned: its namespace pins and so does it, and the source is
	// pinned: until the hook re-stamps it, every pod it starts (a restart,
	// a scale-up, a replaced pod) still reads the content before the
	// change.
	Pinned bool `json:"pinned,omitempty"`
	// Waits, when set, is what its own annotations say keeps it from
	// rolling when its wave comes: a flap hold in force, or a halt of
	// another source's change. It rolls once that ends; its wave does not
	// wait for it meanwhile.
	Waits string `json:"waits,omitempty"`
	// When says when the hook may start re-stamping it (window.Decide):
	// "now", or the closed rollout window or the freeze that holds it and
	// the instant it may start, or that an urgent source (Urgent) lets it
	// through one now.
	When string `json:"when"`
	// Later: a rollout window or a freeze holds it; Until is when it may
	// start (zero when no opening comes within about a year). The hook
	// puts such readers after the others in the waves.
	Later bool      `json:"later,omitempty"`
	Until time.Time `json:"until,omitzero"`
	// Urgent are the changed sources marked confighash.dev/urgent that let
	// it through a closed window or a freeze.
	Urgent []string `json:"urgent,omitempty"`
}

// Why says, in one word, why a reader does not roll.
type Why string

// The reasons a reader does not roll.
const (
	// WhyUnchanged: nothing it reads changes.
	WhyUnchanged Why = "unchanged"
	// WhyNotServed: confighash does not serve the namespace.
	WhyNotServed Why = "not-served"
	// WhySkipped: confighash reads nothing for it (workload.Skip: opted
	// out, over the sources limit, ...).
	WhySkipped Why = "skipped"
	// WhyNotWatched: the hook refuses to watch its kind (a custom kind
	// whose template path leads nowhere), so never re-stamps it.
	WhyNotWatched Why = "not-watched"
	// WhyExcluded: its confighash.dev/exclude drops the source.
	WhyExcluded Why = "excluded"
	// WhyIgnored: the source carries confighash.dev/ignore=true, before or
	// after the change.
	WhyIgnored Why = "ignored"
	// WhyMissingSource: a source it requires is missing; the hook keeps
	// the stamp until it exists.
	WhyMissingSource Why = "missing-source"
	// WhyTooLarge: a source it reads has more keys than the hook holds.
	WhyTooLarge Why = "source-too-large"
	// WhyImmutable: the live source is immutable; the apiserver refuses
	// the change.
	WhyImmutable Why = "immutable"
	// WhyDeleting: the workload is being deleted.
	WhyDeleting Why = "deleting"
	// WhyUnknown: what it would get could not be computed (a source could
	// not be read).
	WhyUnknown Why = "unknown"
)

// NotRolling is a reader that does not roll.
type NotRolling struct {
	Workload
	Why Why `json:"why"`
	// Reason says it for people.
	Reason string `json:"reason"`
}
