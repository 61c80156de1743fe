package hasher

import (
	"regexp"
	"testing"
)

func TestKeyID(t *testing.T) {
	a, b := KeyID([]byte("key-1")), KeyID([]byte("key-2"))
	if !regexp.MustCompile(`^[0-9a-f]{16}$`).MatchString(a) {
		t.Fatalf("KeyID = %q, want 16 lowercase hex digits", a)
	}
	if a == b {
		t.Errorf("two keys share the ID %s", a)
	}
	if again := KeyID([]byte("key-1")); again != a {
		t.Errorf("KeyID is not stable: %s then %s", a, again)
	}
}

func TestCompare(t *testing.T) {
	const (
		fresh   = "v2:1111111111111111:aaaa"
		content = "v2:1111111111111111:bbbb" // same key, other content
		rekeyed = "v2:2222222222222222:aaaa" // another key
		legacy  = "v1:aaaa"
	)
	tests := map[string]struct {
		stored, fresh string
		want          Match
	}{
		"same":                        {stored: fresh, fresh: fresh, want: Same},
		"content changed":             {stored: content, fresh: fresh, want: Differs},
		"another key":                 {stored: rekeyed, fresh: fresh, want: OtherKey},
		"legacy v1 is a change":       {stored: legacy, fresh: fresh, want: Differs},
		"not stamped":                 {stored: "", fresh: fresh, want: Differs},
		"reads nothing any more":      {stored: fresh, fresh: "", want: Differs},
		"legacy, reads nothing":       {stored: legacy, fresh: "", want: Differs},
		"neither":                     {stored: "", fresh: "", want: Same},
		"unknown format is a change":  {stored: "v9:whatever", fresh: fresh, want: Differs},
		"v2 without key ID is change": {stored: "v2:aaaa", fresh: fresh, want: Differs},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := Compare(tc.stored, tc.fresh); got != tc.want {
				t.Errorf("Compare(%q, %q) = %s, want %s", tc.stored, tc.fresh, got, tc.want)
			}
		})
	}
}

// TestChecksumCarriesKeyID: the key ID in a stamp is the one of the key
// that made it, so a key change is told apart from a content change.
func TestChecksumCarriesKeyID(t *testing.T) {
	s := scenario{refs: []Reference{whole(Secret, "db")}}
	old := s.checksum(t).Checksum
	s.key = "another-key"
	now := s.checksum(t).Checksum
	if id, ok := StampKeyID(old); !ok || id != KeyID([]byte(testKey)) {
		t.Errorf("StampKeyID(%s) = %s, %v; want %s", old, id, ok, KeyID([]byte(testKey)))
	}
	if got := Compare(old, now); got != OtherKey {
		t.Errorf("Compare(stamp under the old key, stamp under the new) = %s, want other-key", got)
	}
}
