package webhook

import "github.com/confighash/confighash/hasher"

// currentFormat reports whether stamp has the format confighash writes now.
// A stamp-only write under confighash's field manager passes only with such
// a stamp. confighash never writes a legacy v1 stamp, so one arriving that
// way was copied, perhaps from another namespace: v1 does not bind the
// namespace, and letting it in would let the hook's keep-or-re-stamp answer
// test a guess of that namespace's Secrets.
func currentFormat(stamp string) bool {
	_, ok := hasher.StampKeyID(stamp)
	return ok
}
