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
)

// OptedOut reports whether the workload carries the opt-out annotation.
func OptedOut(annotations map[string]string) bool {
	return annotations[InjectionAnnotation] == InjectionDisabled
}
