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
	return rolloutRecord.read(body, err, now, true)
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
	return haltRecord.read(body, err, now, true)
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
	h, err := holdRecord.read(body, err, now, true)
	return h.capped(maxQuiet), err
}

// capped is h with its quiet time at most maxQuiet (0: no cap).
func (h Hold) capped(maxQuiet time.Duration) Hold {
	if maxQuiet > 0 && h.Quiet > maxQuiet {
		h.Quiet = maxQuiet
	}
	return h
}

// recordKind is what reading one kind of record takes: its annotation,
// its parser and its since. keepSince: a since within clockSkew ahead is
// kept as it is rather than taken as now (a hold's since is not a time
// the hook waits for, but what tells one hold from another).
type recordKind[R any] struct {
	annotation string
	parse      func(string) (R, error)
	since      func(*R) *time.Time
	keepSince  bool
}

var (
	rolloutRecord = recordKind[Rollout]{annotation: RolloutAnnotation, parse: ParseRollout, since: func(r *Rollout) *time.Time { return &r.Since }}
	haltRecord    = recordKind[Halt]{annotation: HaltAnnotation, parse: ParseHalt, since: func(h *Halt) *time.Time { return &h.Since }}
	holdRecord    = recordKind[Hold]{annotation: HoldAnnotation, parse: ParseHold, since: func(h *Hold) *time.Time { return &h.Since }, keepSince: true}
)

// read parses a record's body, opened with err, and refuses it when its
// since is ahead of now; dated false checks no date. Any error gives the
// zero record.
func (k recordKind[R]) read(body string, err error, now time.Time, dated bool) (R, error) {
	var zero R
	if err != nil {
		return zero, err
	}
	r, err := k.parse(body)
	if err != nil {
		return zero, err
	}
	if !dated {
		return r, nil
	}
	since := k.since(&r)
	at, err := notAhead(k.annotation, *since, now)
	if err != nil {
		return zero, err
	}
	if !k.keepSince {
		*since = at
	}
	return r, nil
}
