package contract

import (
	"strings"
	"testing"
	"time"
)

func TestRolloutAndHaltRoundTrip(t *testing.T) {
	since := time.Date(2026, 12, 1, 15, 0, 7, 0, time.UTC)
	cs := []Change{{Source: "configmap/shared", Content: "0123456789abcdef"}, {Source: "secret/db", Content: "fedcba9876543210"}}
	r := Rollout{Since: since, Changes: cs[1:], Read: cs}
	got, err := ParseRollout(r.String())
	if err != nil || !got.Since.Equal(since) || len(got.Changes) != 1 || !got.Has(cs[1]) || got.Has(cs[0]) || len(got.Read) != 2 {
		t.Fatalf("ParseRollout(%q) = %+v, %v", r.String(), got, err)
	}
	h := Halt{Since: since, Changes: cs[:1], Reason: "CrashLoopBackOff"}
	gh, err := ParseHalt(h.String())
	if err != nil || gh.Reason != "CrashLoopBackOff" || !gh.Has(cs[0]) || gh.Has(cs[1]) {
		t.Fatalf("ParseHalt(%q) = %+v, %v", h.String(), gh, err)
	}
	// A re-stamp that changed no source.
	if r, err := ParseRollout(Rollout{Since: since, Read: cs}.String()); err != nil || len(r.Changes) != 0 || len(r.Read) != 2 {
		t.Fatalf("a record with no changes: %+v, %v", r, err)
	}
	// A key added later under v1 is skipped.
	if _, err := ParseHalt(h.String() + " extra=1"); err != nil {
		t.Fatalf("unknown key: %v", err)
	}
}

func TestRolloutAndHaltRejectBadValues(t *testing.T) {
	for _, s := range []string{
		"",
		HaltReleased,
		"v2 since=2026-12-01T15:00:07Z changes=configmap/a@0123456789abcdef reason=X",
		"v1 changes=configmap/a@0123456789abcdef reason=X",
		"v1 since=yesterday changes=configmap/a@0123456789abcdef reason=X",
		"v1 since=2026-12-01T15:00:07Z changes=configmap/a@0123 reason=X",
		"v1 since=2026-12-01T15:00:07Z changes=pod/a@0123456789abcdef reason=X",
		"v1 since=2026-12-01T15:00:07Z changes=configmap/a@0123456789ABCDEF reason=X",
		"v1 since=2026-12-01T15:00:07Z changes=configmap/a@0123456789abcdef reason=",
		"v1 since=2026-12-01T15:00:07Z changes=configmap/a@0123456789abcdef reason",
	} {
		if h, err := ParseHalt(s); err == nil {
			t.Errorf("ParseHalt(%q) = %+v, want an error", s, h)
		} else if !strings.Contains(err.Error(), HaltAnnotation) && s != "" {
			t.Errorf("ParseHalt(%q): error %q does not name the annotation", s, err)
		}
	}
}
