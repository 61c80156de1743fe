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

// foreign reports whether stamp is one confighash does not write: a legacy
// v1 stamp (releases before v2) or anything else that is not of the current
// format.
//
// No write keeps one. v1 does not bind the namespace, so a v1 stamp copied
// from another namespace that confighash kept, or compared with content,
// would let anyone test a guess of that namespace's Secrets with a
// same-named Secret of their own. Nothing in confighash compares a foreign
// stamp any more: it is treated as differing, like no stamp at all. The
// webhook cannot tell confighash's own v1 stamps from copied ones (a stored
// stamp may have been written while the webhook was not called: namespace
// unlabelled, workload opted out, webhook down), and a review POSTed to the
// webhook carries whatever old object its caller wrote.
func foreign(stamp string) bool {
	return stamp != "" && !currentFormat(stamp)
}
