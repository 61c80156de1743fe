package contract

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// TestReadUnverified: without the key, every check but the MAC's is the
// hook's: what ReadHalt and ReadHold refuse for another reason than the
// MAC, the unverified readers refuse too, with the same error.
func TestReadUnverified(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	s := Subject{Kind: "Deployment", Namespace: "ns", Name: "web", UID: "u"}
	c := Change{Source: "configmap/app", Content: "0123456789abcdef"}
	halt := Halt{Since: now.Add(-time.Minute), Changes: []Change{c}, Reason: "X"}
	ahead := Halt{Since: now.Add(time.Hour), Changes: []Change{c}, Reason: "X"}
	long := Halt{Since: now, Changes: []Change{c}, Reason: strings.Repeat("X", maxRecordLen)}
	for name, tc := range map[string]struct {
		value string
		want  error // nil: read
	}{
		"sealed":        {halt.Sealed(recKey, s), nil},
		"unsealed":      {halt.String(), ErrRecordUnsealed},
		"mac misplaced": {halt.Sealed(recKey, s) + " ", ErrRecordForged},
		"ahead":         {ahead.Sealed(recKey, s), ErrRecordFuture},
		"too long":      {long.Sealed(recKey, s), ErrRecordTooLong},
	} {
		_, hookErr := ReadHalt(recKey, s, tc.value, now)
		_, err := ReadHaltUnverified(tc.value, now)
		if !errors.Is(err, tc.want) || (tc.want == nil) != (err == nil) || !errors.Is(hookErr, tc.want) || (hookErr == nil) != (err == nil) {
			t.Errorf("%s: unverified %v, hook %v; want %v", name, err, hookErr, tc.want)
		}
	}
	if _, err := ReadHaltUnverified(halt.Sealed([]byte("another key"), s), now); err != nil {
		t.Errorf("a MAC only the key refuses: %v, want it read", err)
	}
	if h, err := ReadHaltUnverified(ahead.Sealed(recKey, s), time.Time{}); err != nil || !h.Since.Equal(ahead.Since) {
		t.Errorf("zero now: %+v, %v; want no date checked", h, err)
	}
	hold := Hold{Since: now.Add(-time.Minute), Quiet: time.Hour}
	if h, err := ReadHoldUnverified(hold.Sealed(recKey, s), now, 5*time.Minute); err != nil || h.Quiet != 5*time.Minute {
		t.Errorf("hold: %+v, %v; want quiet capped at 5m", h, err)
	}
	hold.Since = now.Add(time.Hour)
	if _, err := ReadHoldUnverified(hold.Sealed(recKey, s), now, 0); !errors.Is(err, ErrRecordFuture) {
		t.Errorf("hold ahead: %v", err)
	}
}
