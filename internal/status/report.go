package status

import (
	"strings"
	"time"
)

// SchemaVersion identifies the JSON layout of Report. Fields may be added
// under the same version; renaming or removing one needs a new version.
const SchemaVersion = "status.confighash.dev/v1"

// State sums up one workload.
type State string

// The states, from the most to the least in need of attention when read by
// a person; Classify documents when each applies.
const (
	// StateNotWatched: the hook refuses to watch the workload's kind, so it
	// is never re-stamped.
	StateNotWatched State = "not-watched"
	// StateMissingSource: a source the pods require does not exist.
	StateMissingSource State = "missing-source"
	// StateHalted: the workload's rollout for a change failed, and the
	// hook halted the change for the source's other readers.
	StateHalted State = "halted"
	// StateHeld: stale, and the hook put the workload on flap hold.
	StateHeld State = "held"
	// StateWaiting: stale, and a change of a source it reads is halted at
	// another workload of its namespace.
	StateWaiting State = "waiting"
	// StateStale: the stamp differs from what the sources give now.
	StateStale State = "stale"
	// StateUnknown: what the sources give now could not be computed.
	StateUnknown State = "unknown"
	// StateNotInjected: confighash does not stamp this workload.
	StateNotInjected State = "not-injected"
	// StateCurrent: the stamp is what the sources give now.
	StateCurrent State = "current"
)

// NeedsAttention reports whether s makes `confighash status` exit 1.
func (s State) NeedsAttention() bool {
	return s == StateStale || s == StateHeld || s == StateMissingSource || s == StateNotWatched ||
		s == StateHalted || s == StateWaiting
}

// InjectionState says whether the webhook stamps a workload.
type InjectionState string

// Injection states.
const (
	InjectionOn      InjectionState = "on"
	InjectionOff     InjectionState = "off"
	InjectionUnknown InjectionState = "unknown"
)

// Presence says whether a source exists.
type Presence string

// Presences. A source being deleted counts as absent, as it does for the
// webhook: pods started from now on will not find it.
const (
	Present         Presence = "present"
	Absent          Presence = "absent"
	PresenceUnknown Presence = "unknown"
)

// AllKeys is the single entry of Source.Keys for a read of the whole object.
const AllKeys = "*"

// Report is what `confighash status` found; `-o json` prints it as is.
//
//	{
//	  "schemaVersion": "status.confighash.dev/v1",
//	  "workloads": [{
//	    "kind": "Deployment", "namespace": "shop", "name": "web",
//	    "injection": {"state": "on", "reason": "namespace shop is labelled confighash.dev/injection=enabled"},
//	    "state": "stale", "reason": "...",
//	    "stampedChecksum": "v1:…", "expectedChecksum": "v1:…",
//	    "sources": [{"kind": "ConfigMap", "name": "web", "keys": ["*"], "optional": false, "presence": "present"}],
//	    "lastConfigChanged": {"type": "Normal", "reason": "ConfigChanged", "time": "2026-…Z", "count": 1, "message": "…"},
//	    "lastFlapHold": null, "lastSourceMissing": null,
//	    "hold": {"since": "2026-…Z", "level": 1, "quiet": "2m0s"},
//	    "halt": {"since": "2026-…Z", "changes": ["configmap/web@0123456789abcdef"], "reason": "CrashLoopBackOff"},
//	    "rollout": {"since": "2026-…Z", "changes": ["configmap/web@0123456789abcdef"]},
//	    "haltedChanges": [{"source": "configmap/web", "workload": "deployment/canary", "reason": "CrashLoopBackOff", "since": "2026-…Z"}],
//	    "pinning": {"pods": 3, "pinned": 1, "unpinned": {"quota-exceeded": 1}, "notSeen": 1},
//	    "error": "…", "notWatched": "…", "warnings": ["…"]
//	  }],
//	  "summary": {"current": 3, "stale": 1}
//	}
//
// "error", "notWatched", "haltedChanges", "pinning" and "warnings" are
// omitted when empty ("pinning" unless the namespace pins); "halt" is {"released": true} for a released halt and {"error": "…"}
// for one that cannot be read; and "presence" is
// "present", "absent" or "unknown" (then with an "error"). The checksums
// are the keyed stamps the pod templates carry anyway; no
// ConfigMap or Secret value is ever read, so none can appear.
type Report struct {
	SchemaVersion string     `json:"schemaVersion"`
	Workloads     []Workload `json:"workloads"`
	// Summary counts the workloads in each state that occurs.
	Summary map[State]int `json:"summary"`
}

// Workload is the status of one workload.
type Workload struct {
	// Kind is Deployment, StatefulSet, DaemonSet, CronJob, Argo Rollouts'
	// Rollout, or a custom kind added with --workload-kind.
	Kind      string    `json:"kind"`
	Namespace string    `json:"namespace"`
	Name      string    `json:"name"`
	Injection Injection `json:"injection"`
	State     State     `json:"state"`
	// Reason explains State in one line.
	Reason string `json:"reason"`
	// StampedChecksum is the stamp in the pod template; empty if none.
	StampedChecksum string `json:"stampedChecksum"`
	// ExpectedChecksum is the stamp the webhook gives the template now;
	// empty when it was not or could not be obtained.
	ExpectedChecksum string `json:"expectedChecksum"`
	// Sources are what the pod template reads, sorted by kind then name.
	Sources []Source `json:"sources"`
	// The newest confighash events of each reason about this workload.
	LastConfigChanged *Event `json:"lastConfigChanged"`
	LastFlapHold      *Event `json:"lastFlapHold"`
	LastSourceMissing *Event `json:"lastSourceMissing"`
	// Hold is the hook's flap hold on the workload, from its
	// confighash.dev/hold annotation; null when it is not held.
	Hold *Hold `json:"hold"`
	// Halt is the hook's halt on the workload, from its confighash.dev/halt
	// annotation: its rollout for a change failed. Null when there is none.
	Halt *Halt `json:"halt"`
	// Rollout is the hook's record of its last re-stamp of the workload,
	// from its confighash.dev/rollout annotation; null when there is none.
	Rollout *Rollout `json:"rollout"`
	// HaltedChanges are the halts in force on the other workloads of its
	// namespace of changes to the sources it reads: a stale workload with
	// any is waiting.
	HaltedChanges []HaltedChange `json:"haltedChanges,omitempty"`
	// Window is set when a rollout window or a freeze holds its next
	// re-stamp, or an urgent source lets it through one; omitted
	// otherwise, and for a workload that is not stale.
	Window *Wait `json:"window,omitempty"`
	// Pinning says how its pods stand with pinning; omitted unless its
	// namespace pins (confighash.dev/pinning=enabled).
	Pinning *Pinning `json:"pinning,omitempty"`
	// Error says why ExpectedChecksum could not be obtained.
	Error string `json:"error,omitempty"`
	// NotWatched says why the hook refuses to watch the workload's custom
	// kind (its template path is not in its CRD's schema); see KindChecker.
	NotWatched string `json:"notWatched,omitempty"`
	// Warnings are problems that did not stop the evaluation: malformed
	// include/exclude entries, webhook warnings, unreadable events.
	Warnings []string `json:"warnings,omitempty"`

	// windowAnnotations and namespaceWindowAnnotations are the rollout
	// window annotations of the workload and of its namespace.
	windowAnnotations, namespaceWindowAnnotations map[string]string
}

// Ref is "kind/name" in lowercase, as kubectl spells it.
func (w *Workload) Ref() string {
	return refOf(w.Kind, w.Name)
}

// refOf is "kind/name" in lowercase, as kubectl spells it.
func refOf(kind, name string) string {
	return strings.ToLower(kind) + "/" + name
}

// Injection says whether the webhook stamps the workload, and why.
type Injection struct {
	State  InjectionState `json:"state"`
	Reason string         `json:"reason"`
}

// Source is one ConfigMap or Secret the pod template reads.
type Source struct {
	// Kind is ConfigMap or Secret.
	Kind string `json:"kind"`
	Name string `json:"name"`
	// Keys are the keys read, sorted, or ["*"] for the whole object.
	Keys []string `json:"keys"`
	// Optional is true when every read of the source is optional.
	Optional bool     `json:"optional"`
	Presence Presence `json:"presence"`
	// Ignored is true when the source carries confighash.dev/ignore: "true"
	// (contract.IgnoreAnnotation), so its content is in no checksum.
	Ignored bool `json:"ignored,omitempty"`
	// WavesOff is true when the source carries confighash.dev/waves: "off"
	// (waves.Off): its changes go to every reader at once, halted or not.
	WavesOff bool `json:"wavesOff,omitempty"`
	// Error says why Presence is unknown.
	Error string `json:"error,omitempty"`

	// windowAnnotations are its rollout window annotations.
	windowAnnotations map[string]string
}

// Ref is "configmap/NAME" or "secret/NAME", the syntax of the include and
// exclude annotations.
func (s *Source) Ref() string {
	return strings.ToLower(s.Kind) + "/" + s.Name
}

// Event is one confighash Event about a workload.
type Event struct {
	// Type is Normal or Warning.
	Type   string `json:"type"`
	Reason string `json:"reason"`
	// Time is when it was last observed.
	Time time.Time `json:"time"`
	// Count is how many times it was observed, at least 1.
	Count   int32  `json:"count"`
	Message string `json:"message"`
}
