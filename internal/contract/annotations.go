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
