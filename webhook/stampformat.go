package webhook

import (
	"github.com/confighash/confighash/hasher"
)

// currentFormat reports whether stamp has the format confighash writes now.
// A stamp-only write under confighash's field manager passes only with such
// a stamp.
func currentFormat(stamp string) bool {
	_, ok := hasher.StampKeyID(stamp)
	return ok
}

// foreign reports whether stamp is one confighash does not write (a legacy
// v1 stamp, or anything else). Such a stamp is never kept nor compared with
// content: v1 does not bind the namespace, so a copied one would let anyone
// test a guess of another namespace's Secrets.
func foreign(stamp string) bool {
	return stamp != "" && !currentFormat(stamp)
}
