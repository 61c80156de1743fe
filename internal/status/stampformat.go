package status

import (
	"fmt"

	"github.com/confighash/confighash/hasher"
)

// foreignReason explains a stamp that is not of the format confighash writes.
const foreignReason = "the stamp is not of the format confighash writes (a v1 stamp from a release before v2, or one written " +
	"while the webhook was not called); confighash never compares such a stamp with the content, so the hook " +
	"re-stamps it, rolling the workload once, when one of its sources changes or when it restarts"

// formatReason explains a stamp that is current or cannot be compared
// because of its format or key, or returns "" when neither applies. A stamp
// not of the current format is stale whatever the content: the hook compares
// it with nothing.
func formatReason(w *Workload) (State, string) {
	_, storedCurrent := hasher.StampKeyID(w.StampedChecksum)
	if _, freshCurrent := hasher.StampKeyID(w.ExpectedChecksum); w.StampedChecksum != "" && !storedCurrent && freshCurrent {
		return StateStale, foreignReason
	}
	if hasher.Compare(w.StampedChecksum, w.ExpectedChecksum) == hasher.OtherKey {
		stored, _ := hasher.StampKeyID(w.StampedChecksum)
		now, _ := hasher.StampKeyID(w.ExpectedChecksum)
		return StateUnknown, fmt.Sprintf("stamped under HMAC key %s, but confighash now uses key %s (the key Secret was replaced or lost), "+
			"so whether the sources changed since cannot be told; nothing rolls until they change, then the hook re-stamps it", stored, now)
	}
	return "", ""
}
