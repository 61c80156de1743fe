package workload

const (
	// ChecksumAnnotation holds the stamp in the pod template. Changing it is
	// what makes the workload controller roll.
	ChecksumAnnotation = "confighash.dev/checksum"

	// InjectionAnnotation set to InjectionDisabled on a workload opts it out.
	InjectionAnnotation = "confighash.dev/injection"
	// InjectionDisabled is the opt-out value of InjectionAnnotation.
	InjectionDisabled = "disabled"

	// InjectionLabel set to InjectionEnabled on a namespace opts it in.
	InjectionLabel = "confighash.dev/injection"
	// InjectionEnabled is the opt-in value of InjectionLabel.
	InjectionEnabled = "enabled"

	// FieldManager is the field manager of every confighash write. The
	// webhook lets a write change nothing but the stamp only when it comes
	// under this name: that is the hook's re-stamp.
	FieldManager = "confighash"
)

// OptedOut reports whether the workload carries the opt-out annotation.
func OptedOut(annotations map[string]string) bool {
	return annotations[InjectionAnnotation] == InjectionDisabled
}
