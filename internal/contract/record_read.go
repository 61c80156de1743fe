package contract

import "time"

// Sealed returns r's annotation value sealed for s. A value longer than
// maxRecordLen would be refused when read, so Read (which only saves work
// at the next re-stamp) is left out when it does not fit, and "" is
// returned when even that does not: the caller then writes no record.
func (r Rollout) Sealed(key []byte, s Subject) string {
	if v := seal(key, s, RolloutAnnotation, r.String()); len(v) <= maxRecordLen {
		return v
	}
	r.Read = nil
	if v := seal(key, s, RolloutAnnotation, r.String()); len(v) <= maxRecordLen {
		return v
	}
	return ""
}

// ReadRollout reads the rollout record value on s, as of now: only a
// record the hook sealed for s under key, at most maxRecordLen long, whose
// since is not ahead of now (within clockSkew it is taken as now). Any
// other value is an error, and no record.
func ReadRollout(key []byte, s Subject, value string, now time.Time) (Rollout, error) {
	body, err := open(key, s, RolloutAnnotation, value)
	if err != nil {
		return Rollout{}, err
	}
	r, err := ParseRollout(body)
	if err != nil {
		return Rollout{}, err
	}
	if r.Since, err = notAhead(RolloutAnnotation, r.Since, now); err != nil {
		return Rollout{}, err
	}
	return r, nil
}

// Sealed returns h's annotation value sealed for s. Changes that would take
// it over maxRecordLen are left out, the last first (the writer puts the
// change it halts now first).
func (h Halt) Sealed(key []byte, s Subject) string {
	for {
		v := seal(key, s, HaltAnnotation, h.String())
		if len(v) <= maxRecordLen || len(h.Changes) <= 1 {
			return v
		}
		h.Changes = h.Changes[:len(h.Changes)-1]
	}
}

// ReadHalt reads the halt record value on s, as of now, as ReadRollout
// does: only a halt the hook sealed for s under key counts. Any other
// value (one that does not verify, is too long, is not a halt, or is dated
// ahead) is an error and no halt: honoured, a halt copied from another
// workload or written by hand would hold a change back from every other
// reader of its source.
func ReadHalt(key []byte, s Subject, value string, now time.Time) (Halt, error) {
	body, err := open(key, s, HaltAnnotation, value)
	if err != nil {
		return Halt{}, err
	}
	h, err := ParseHalt(body)
	if err != nil {
		return Halt{}, err
	}
	if h.Since, err = notAhead(HaltAnnotation, h.Since, now); err != nil {
		return Halt{}, err
	}
	return h, nil
}

// Sealed returns h's annotation value sealed for s.
func (h Hold) Sealed(key []byte, s Subject) string {
	return seal(key, s, HoldAnnotation, h.String())
}

// ReadHold reads the hold record value on s, as of now, as ReadRollout
// does (but a since within clockSkew ahead is kept as it is), and caps its quiet time at maxQuiet (--flap-quiet-max; 0: no cap):
// whatever the record says, a hold read from it ends within that of the
// sources' last change.
func ReadHold(key []byte, s Subject, value string, now time.Time, maxQuiet time.Duration) (Hold, error) {
	body, err := open(key, s, HoldAnnotation, value)
	if err != nil {
		return Hold{}, err
	}
	h, err := ParseHold(body)
	if err != nil {
		return Hold{}, err
	}
	// Since is not a time the hook waits for, but what tells one hold
	// from another: refused when ahead, never moved.
	if _, err := notAhead(HoldAnnotation, h.Since, now); err != nil {
		return Hold{}, err
	}
	if maxQuiet > 0 && h.Quiet > maxQuiet {
		h.Quiet = maxQuiet
	}
	return h, nil
}
