package contract

import (
	"errors"
	"strings"
	"testing"
	"time"
)

var (
	recKey  = []byte("0123456789abcdef0123456789abcdef")
	recSubj = Subject{Kind: "Deployment.apps", Namespace: "team-a", Name: "web", UID: "uid-1"}
	recNow  = time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	recCs   = []Change{{Source: "configmap/shared", Content: "0123456789abcdef"}, {Source: "secret/db", Content: "fedcba9876543210"}}
)

func TestSealedRecordsRoundTrip(t *testing.T) {
	r := Rollout{Since: recNow.Add(-time.Minute), Changes: recCs[:1], Read: recCs}
	got, err := ReadRollout(recKey, recSubj, r.Sealed(recKey, recSubj), recNow)
	if err != nil || !got.Since.Equal(r.Since) || !got.Has(recCs[0]) || len(got.Read) != 2 {
		t.Fatalf("ReadRollout = %+v, %v", got, err)
	}
	h := Halt{Since: recNow, Changes: recCs, Reason: "CrashLoopBackOff"}
	gh, err := ReadHalt(recKey, recSubj, h.Sealed(recKey, recSubj), recNow)
	if err != nil || gh.Reason != h.Reason || !gh.Has(recCs[1]) {
		t.Fatalf("ReadHalt = %+v, %v", gh, err)
	}
	hold := Hold{Since: recNow, Level: 2, Quiet: 4 * time.Minute}
	ghold, err := ReadHold(recKey, recSubj, hold.Sealed(recKey, recSubj), recNow, 30*time.Minute)
	if err != nil || ghold != hold {
		t.Fatalf("ReadHold = %+v, %v", ghold, err)
	}
	// An older leader (or status) still parses a sealed value: mac is a
	// key it skips.
	if _, err := ParseRollout(r.Sealed(recKey, recSubj)); err != nil {
		t.Fatalf("ParseRollout of a sealed value: %v", err)
	}
	if !Sealed(r.Sealed(recKey, recSubj)) || Sealed(r.String()) || Unsealed(r.Sealed(recKey, recSubj)) != r.String() {
		t.Fatal("Sealed/Unsealed do not tell a sealed value")
	}
}

// TestRecordBoundToItsWorkload: a record is only its own workload's, under
// confighash's key: one written by hand, copied from another workload (or
// from the same name before it was deleted and created again), edited, or
// sealed under another key is no record.
func TestRecordBoundToItsWorkload(t *testing.T) {
	r := Rollout{Since: recNow, Changes: recCs[:1], Read: recCs}
	sealed := r.Sealed(recKey, recSubj)
	other := func(f func(*Subject)) Subject { s := recSubj; f(&s); return s }
	cases := map[string]struct {
		key   []byte
		subj  Subject
		value string
		want  error
	}{
		"written by hand":         {recKey, recSubj, r.String(), ErrRecordUnsealed},
		"copied: other UID":       {recKey, other(func(s *Subject) { s.UID = "uid-2" }), sealed, ErrRecordForged},
		"copied: other name":      {recKey, other(func(s *Subject) { s.Name = "api" }), sealed, ErrRecordForged},
		"copied: other namespace": {recKey, other(func(s *Subject) { s.Namespace = "team-b" }), sealed, ErrRecordForged},
		"copied: other kind":      {recKey, other(func(s *Subject) { s.Kind = "StatefulSet.apps" }), sealed, ErrRecordForged},
		"another key":             {[]byte("another key, 32 bytes long......"), recSubj, sealed, ErrRecordForged},
		"edited": {recKey, recSubj, strings.Replace(sealed, "configmap/shared@0123456789abcdef",
			"configmap/shared@1123456789abcdef", 1), ErrRecordForged},
		"a MAC with a wrong length": {recKey, recSubj, r.String() + " mac=00", ErrRecordForged},
		"a MAC of another field": {recKey, recSubj, Halt{Since: recNow, Changes: recCs, Reason: "X"}.Sealed(recKey, recSubj),
			ErrRecordForged},
	}
	for name, tc := range cases {
		if got, err := ReadRollout(tc.key, tc.subj, tc.value, recNow); !errors.Is(err, tc.want) {
			t.Errorf("%s: ReadRollout = %+v, %v; want %v", name, got, err, tc.want)
		}
	}
	// The pre-image is length-prefixed: moving a character from one field
	// of the subject to the next makes another MAC.
	a := Subject{Kind: "D", Namespace: "ab", Name: "c", UID: "u"}
	b := Subject{Kind: "D", Namespace: "a", Name: "bc", UID: "u"}
	if _, err := ReadRollout(recKey, b, r.Sealed(recKey, a), recNow); !errors.Is(err, ErrRecordForged) {
		t.Errorf("a record of %+v verifies on %+v: %v", a, b, err)
	}
}

// TestRecordSinceNotAhead: a since ahead of now would never time out and
// would make every crash look older than the change; it is refused beyond
// clockSkew, and within it taken as now.
func TestRecordSinceNotAhead(t *testing.T) {
	far := Rollout{Since: recNow.Add(24 * time.Hour), Changes: recCs[:1]}
	if got, err := ReadRollout(recKey, recSubj, far.Sealed(recKey, recSubj), recNow); !errors.Is(err, ErrRecordFuture) {
		t.Errorf("a since a day ahead: %+v, %v", got, err)
	}
	near := Rollout{Since: recNow.Add(30 * time.Second), Changes: recCs[:1]}
	if got, err := ReadRollout(recKey, recSubj, near.Sealed(recKey, recSubj), recNow); err != nil || !got.Since.Equal(recNow) {
		t.Errorf("a since within the skew: %+v, %v; want since %s", got, err, recNow)
	}
	h := Halt{Since: recNow.Add(time.Hour), Changes: recCs, Reason: "X"}
	if got, err := ReadHalt(recKey, recSubj, h.Sealed(recKey, recSubj), recNow); !errors.Is(err, ErrRecordFuture) {
		t.Errorf("a halt an hour ahead: %+v, %v", got, err)
	}
	hold := Hold{Since: recNow.Add(time.Hour), Quiet: time.Minute}
	if got, err := ReadHold(recKey, recSubj, hold.Sealed(recKey, recSubj), recNow, time.Hour); !errors.Is(err, ErrRecordFuture) {
		t.Errorf("a hold an hour ahead: %+v, %v", got, err)
	}
	// A hold's since tells one hold from another: within the skew it is
	// kept as written, not moved to now.
	hold.Since = recNow.Add(30 * time.Second)
	if got, err := ReadHold(recKey, recSubj, hold.Sealed(recKey, recSubj), recNow, time.Hour); err != nil || !got.Since.Equal(hold.Since) {
		t.Errorf("a hold within the skew: %+v, %v; want since %s", got, err, hold.Since)
	}
	nearHalt := Halt{Since: recNow.Add(30 * time.Second), Changes: recCs, Reason: "X"}
	if got, err := ReadHaltUnverified(nearHalt.Sealed(recKey, recSubj), recNow); err != nil || !got.Since.Equal(recNow) {
		t.Errorf("an unverified halt within the skew: %+v, %v; want since %s", got, err, recNow)
	}
}

// TestHoldQuietCapped: whatever quiet time a hold says, it is read as at
// most the configured cap.
func TestHoldQuietCapped(t *testing.T) {
	h := Hold{Since: recNow, Level: 1000, Quiet: 100000 * time.Hour}
	got, err := ReadHold(recKey, recSubj, h.Sealed(recKey, recSubj), recNow, 30*time.Minute)
	if err != nil || got.Quiet != 30*time.Minute {
		t.Fatalf("ReadHold = %+v, %v; want quiet 30m", got, err)
	}
}

// TestRecordTooLongNotParsed: a value over maxRecordLen is refused on its
// length, before its MAC is computed or it is parsed.
func TestRecordTooLongNotParsed(t *testing.T) {
	long := "v1 since=" + recNow.Format(time.RFC3339) + " changes=" + strings.Repeat("x", 256<<10)
	for name, read := range map[string]func() error{
		"rollout": func() error { _, err := ReadRollout(recKey, recSubj, long, recNow); return err },
		"halt":    func() error { _, err := ReadHalt(recKey, recSubj, long, recNow); return err },
		"hold":    func() error { _, err := ReadHold(recKey, recSubj, long, recNow, 0); return err },
	} {
		err := read()
		if !errors.Is(err, ErrRecordTooLong) {
			t.Errorf("%s: %v, want ErrRecordTooLong", name, err)
		}
		if err != nil && len(err.Error()) > 200 {
			t.Errorf("%s: the error quotes the value (%d bytes)", name, len(err.Error()))
		}
	}
}

// TestSealedFitsTheLimit: the hook never writes a record it would refuse.
func TestSealedFitsTheLimit(t *testing.T) {
	var many []Change
	for i := range 256 {
		many = append(many, Change{Source: "configmap/" + strings.Repeat("n", 200) + string(rune('a'+i%26)) + strings.Repeat("x", i%7), Content: "0123456789abcdef"})
	}
	r := Rollout{Since: recNow, Changes: many[:10], Read: many}
	v := r.Sealed(recKey, recSubj)
	got, err := ReadRollout(recKey, recSubj, v, recNow)
	if len(v) > maxRecordLen || err != nil || len(got.Changes) != 10 || len(got.Read) != 0 {
		t.Fatalf("a record too long with Read: %d bytes, %+v, %v; want its changes without Read", len(v), got.Changes, err)
	}
	if v := (Rollout{Since: recNow, Changes: many}).Sealed(recKey, recSubj); v != "" {
		t.Fatalf("a record too long without Read: %d bytes, want none", len(v))
	}
	h := Halt{Since: recNow, Changes: many, Reason: "X"}
	hv := h.Sealed(recKey, recSubj)
	gh, err := ReadHalt(recKey, recSubj, hv, recNow)
	if len(hv) > maxRecordLen || err != nil || !gh.Has(many[0]) {
		t.Fatalf("a halt too long: %d bytes, %v", len(hv), err)
	}
}

// TestUnverifiedHaltIsNoHalt: a halt is the hook's record like the
// others: one written by hand (or before records were sealed), copied from
// another workload, or sealed under another key is no halt, with an error
// that says which; the reader treats it as absent.
func TestUnverifiedHaltIsNoHalt(t *testing.T) {
	h := Halt{Since: recNow, Changes: recCs[:1], Reason: "CrashLoopBackOff"}
	otherUID := recSubj
	otherUID.UID = "uid-2"
	for name, tc := range map[string]struct {
		value string
		want  error
	}{
		"written before records were sealed": {h.String(), ErrRecordUnsealed},
		"copied: other UID":                  {h.Sealed(recKey, otherUID), ErrRecordForged},
		"copied: another workload":           {h.Sealed(recKey, Subject{Kind: "Deployment.apps", Namespace: "team-b", Name: "api", UID: "uid-3"}), ErrRecordForged},
		"another key":                        {h.Sealed([]byte("another key, 32 bytes long......"), recSubj), ErrRecordForged},
	} {
		got, err := ReadHalt(recKey, recSubj, tc.value, recNow)
		if !errors.Is(err, tc.want) || got.Has(recCs[0]) || len(got.Changes) != 0 {
			t.Errorf("%s: ReadHalt = %+v, %v; want no halt, %v", name, got, err, tc.want)
		}
	}
	if _, err := ReadHalt(recKey, recSubj, seal(recKey, recSubj, HaltAnnotation, "v1 nonsense"), recNow); err == nil || errors.Is(err, ErrRecordUnsealed) || errors.Is(err, ErrRecordForged) {
		t.Errorf("sealed, but no halt: %v; want an error other than unverified", err)
	}
}
