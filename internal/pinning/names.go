package pinning

// The names pinning reads and writes on objects.
const (
	// NamespaceLabel set to NamespaceEnabled on a served namespace turns
	// pinning on for its workloads.
	NamespaceLabel = "confighash.dev/pinning"
	// NamespaceEnabled is the opt-in value of NamespaceLabel.
	NamespaceEnabled = "enabled"
	// PinAnnotation on a workload set to PinOff opts it out; on a ConfigMap
	// or Secret set to PinNever keeps every reader on the live object.
	PinAnnotation = "confighash.dev/pin"
	// PinOff is PinAnnotation's opt-out value on a workload.
	PinOff = "off"
	// PinNever is PinAnnotation's opt-out value on a source.
	PinNever = "never"

	// SnapshotLabel marks a snapshot, with the value "true".
	SnapshotLabel = "confighash.dev/snapshot"
	// SnapshotOfAnnotation names a snapshot's source, as hasher.Source's
	// String: "configmap/NAME" or "secret/NAME".
	SnapshotOfAnnotation = "confighash.dev/snapshot-of"
	// StampLabelPrefix begins the key of each label that seals a snapshot
	// to a stamp it serves (stamp_seal.go).
	StampLabelPrefix = "stamp.confighash.dev/"
	// managedByLabel is the well-known label that names the manager.
	managedByLabel = "app.kubernetes.io/managed-by"
	// managedBy is managedByLabel's value on a snapshot.
	managedBy = "confighash"
)

// PodAnnotation on a pod says whether it was pinned: "true", or "false:"
// and the reason.
const PodAnnotation = "confighash.dev/pinned"
