package contract

import (
	"fmt"
	"strings"
	"time"
)

// ReadHaltUnverified reads a halt record value as ReadHalt does, for a
// reader without confighash's key (`confighash status`, `preview`): every
// check but the MAC's. So it refuses what the hook refuses without the
// key (unsealed, too long, unreadable, dated ahead) and takes a value whose
// MAC only the key can refuse (copied from another workload, forged) as the
// hook's. A zero now checks no date.
func ReadHaltUnverified(value string, now time.Time) (Halt, error) {
	body, err := openUnverified(HaltAnnotation, value)
	return haltRecord.read(body, err, now, !now.IsZero())
}

// ReadHoldUnverified reads a hold record value as ReadHold does (quiet
// capped at maxQuiet, 0: no cap), but for the MAC, as ReadHaltUnverified.
func ReadHoldUnverified(value string, now time.Time, maxQuiet time.Duration) (Hold, error) {
	body, err := openUnverified(HoldAnnotation, value)
	h, err := holdRecord.read(body, err, now, !now.IsZero())
	return h.capped(maxQuiet), err
}

// openUnverified is open without the key: the length, and a MAC field in
// its place, are checked; the MAC itself is not.
func openUnverified(annotation, value string) (string, error) {
	if len(value) > maxRecordLen {
		return "", fmt.Errorf("%s (%d bytes): %w", annotation, len(value), ErrRecordTooLong)
	}
	if !Sealed(value) {
		if strings.Contains(value, macField) {
			return "", fmt.Errorf("%s: %w", annotation, ErrRecordForged)
		}
		return "", fmt.Errorf("%s: %w", annotation, ErrRecordUnsealed)
	}
	return Unsealed(value), nil
}
