package contract

// Annotations on a workload (Deployment, StatefulSet, DaemonSet, a custom
// kind, ...).
const (
	// ChecksumAnnotation holds the stamp in the pod template. Changing it is
	// what makes the workload controller roll. confighash writes it.
	ChecksumAnnotation = "confighash.dev/checksum"

	// InjectionAnnotation set to InjectionDisabled on a workload opts it out.
	InjectionAnnotation = "confighash.dev/injection"
	// InjectionDisabled is the opt-out value of InjectionAnnotation.
	InjectionDisabled = "disabled"

	// IncludeAnnotation adds sources the pod spec does not reference, such as
	// ones an application fetches from the API itself: a comma-separated
	// list of sources, e.g. "configmap/app, secret/db". They are read whole
	// (binaryData included) and are optional: the pods do not mount them, so
	// a missing one cannot stop them starting, and it must not freeze the
	// stamp while the sources they do mount change (a required source that
	// is missing keeps the stamp). A missing included source is hashed as
	// absent, so creating it rolls the workload once. A source the spec also
	// reads keeps the spec's requirement.
	IncludeAnnotation = "confighash.dev/include"
	// ExcludeAnnotation drops sources whose changes should not roll the
	// workload, such as ones the application reloads on its own: a list as
	// for IncludeAnnotation. It wins over both the spec and
	// IncludeAnnotation.
	ExcludeAnnotation = "confighash.dev/exclude"

	// CoalesceWindowAnnotation on a workload's own metadata sets its
	// coalescing window, e.g. "3s": a workload whose config is written in
	// long steps can wait longer than the default, one that must roll at
	// once can say "0s". Users set it; confighash only reads it.
	CoalesceWindowAnnotation = "confighash.dev/coalesce-window"

	// HoldAnnotation on a workload's own metadata (never its pod template,
	// so writing it rolls nothing) says the hook holds the workload's
	// re-stamps because its sources flap. It lives on the workload rather
	// than only in the leader's memory so that a new leader honours a hold
	// it did not start, and so that `confighash status` can show it. It
	// carries no config content; its value is a Hold (see Hold.String).
	HoldAnnotation = "confighash.dev/hold"

	// RolloutOrderAnnotation on a workload's own metadata places it in the
	// waves of its sources' changes: an integer, lower goes first, 0 when
	// unset (so "-1" goes before every unannotated reader: a staging or
	// canary Deployment, say). Ties go by namespace, kind and name. Users
	// set it; confighash only reads it.
	RolloutOrderAnnotation = "confighash.dev/rollout-order"

	// RolloutAnnotation on a workload's own metadata records the change the
	// hook last re-stamped it for, and when (a Rollout, see
	// Rollout.String), so that a new leader knows which readers of a
	// change have gone and can judge their rollout. It is written in the
	// same patch as the stamp, and carries no config content: a change is
	// named by its source and a keyed digest of the source's content.
	RolloutAnnotation = "confighash.dev/rollout"

	// HaltAnnotation on a workload's own metadata says that its rollout for
	// a change failed, and that the change is halted: the source's readers
	// not yet re-stamped keep their stamp until the source changes again (a
	// Halt, see Halt.String). A user releases the halt by setting it to
	// HaltReleased: the waves go on as if the rollout had succeeded.
	HaltAnnotation = "confighash.dev/halt"
	// HaltReleased is the value of HaltAnnotation that releases a halt.
	HaltReleased = "released"
)

// An annotation on a workload or on a source.
const (
	// WavesAnnotation set to WavesOff on a workload re-stamps it at once
	// when its config changes, with no wave and no halt; set on a
	// ConfigMap or Secret, it does that for all of its readers (and so
	// pushes a halted change to every reader at once).
	WavesAnnotation = "confighash.dev/waves"
	// WavesOff is the value of WavesAnnotation that opts out of waves.
	WavesOff = "off"

	// WindowAnnotation on a workload, a namespace or a ConfigMap or Secret
	// is a rollout window (internal/window: "Mon-Fri 09:00-17:00
	// Europe/Berlin"): config-triggered rollouts start only while it is
	// open. On a workload "always" opts out of its namespace's or the
	// cluster's window. Users set it; confighash only reads it.
	WindowAnnotation = "confighash.dev/window"
	// FreezeAnnotation on a namespace holds every config-triggered rollout
	// there during its periods ("2026-12-21/2027-01-04 Europe/Berlin",
	// several separated by ";").
	FreezeAnnotation = "confighash.dev/freeze"
	// UrgentAnnotation on a ConfigMap or Secret lets its changes through
	// closed windows and freezes; its value says why (a ticket, a name).
	// Each use is reported in an Event naming who set it.
	UrgentAnnotation = "confighash.dev/urgent"
)

// Annotations on a source (ConfigMap or Secret).
const (
	// IgnoreAnnotation set to IgnoreTrue on a ConfigMap or Secret keeps its
	// content out of every checksum: its changes never change a stamp. It is
	// for sources that change without mattering to their readers: one an
	// operator rewrites with a timestamp, one a sidecar reloads on its own.
	// Users set it on the source; confighash only reads it. Exactly "true"
	// counts, like the other confighash switches, so a typo never silently
	// widens what is left out.
	IgnoreAnnotation = "confighash.dev/ignore"
	// IgnoreTrue is the value of IgnoreAnnotation that ignores a source.
	IgnoreTrue = "true"
)
