package hasher

import "strings"

// Match says how a stored stamp stands against the one the content gives
// now, as far as can be told without recomputing anything.
type Match int

const (
	// Differs means the content (or what is read) changed, or nothing is stored.
	Differs Match = iota
	// Same means the stored stamp is the fresh one.
	Same
	// OtherKey means the stored stamp was made under another HMAC key, so
	// whether the content changed cannot be told. Re-stamping now would roll
	// the workload for nothing; keep it until a change is seen.
	OtherKey
)

func (v Match) String() string {
	switch v {
	case Same:
		return "same"
	case OtherKey:
		return "other-key"
	}
	return "differs"
}

// Compare classifies stored against fresh, a stamp Checksum returned (or ""
// when the template reads nothing). A stored stamp not of the current format
// (a legacy v1 stamp, or anything else Checksum does not write) Differs: it
// is never compared with content (see Versioning in the package
// documentation).
func Compare(stored, fresh string) Match {
	switch {
	case stored == fresh:
		return Same
	case stored == "" || fresh == "":
		return Differs
	}
	if id, ok := StampKeyID(stored); ok {
		if freshID, _ := StampKeyID(fresh); id != freshID {
			return OtherKey
		}
	}
	return Differs
}

// StampKeyID returns the key ID a current-format stamp carries.
func StampKeyID(stamp string) (string, bool) {
	rest, ok := strings.CutPrefix(stamp, Version+":")
	if !ok {
		return "", false
	}
	id, _, ok := strings.Cut(rest, ":")
	return id, ok && id != ""
}
