package contract

// Labels on a namespace.
const (
	// InjectionLabel set to InjectionEnabled on a namespace opts it in: the
	// webhook stamps its workloads and the hook re-stamps them.
	InjectionLabel = "confighash.dev/injection"
	// InjectionEnabled is the opt-in value of InjectionLabel.
	InjectionEnabled = "enabled"
)
