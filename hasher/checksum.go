package hasher

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
)

// Version prefixes every checksum. It changes whenever the pre-image format
// changes (see Versioning in the package documentation).
const Version = "v2"

// Lookup returns a source's content and whether it exists. err is for
// lookup failures such as API errors, not for absence.
type Lookup func(Source) (c Content, found bool, err error)

// Result is the outcome of Checksum.
type Result struct {
	// Checksum is Version ":" KeyID(key) ":" lowercase hex of
	// HMAC-SHA256(key, pre-image), or "" when there are no references.
	Checksum string
	// Missing lists, sorted, the required sources that do not exist. They
	// are still part of the checksum, as absent, so the workload rolls
	// when they are created; callers may want to warn about them.
	Missing []Source
}

// Checksum computes the stamp for refs read in namespace, fetching content
// through lookup. refs need not be sorted or merged: duplicates are merged
// with the same rules as References and the result does not depend on their
// order. key is the HMAC key and must not be empty. Lookup errors are
// returned wrapped with the name of the source.
//
// The namespace is part of the pre-image so that equal content in two
// namespaces gives two unrelated stamps: otherwise a user who may create
// Secrets in one namespace could test guesses of a Secret in another by
// comparing stamps.
func Checksum(key []byte, namespace string, refs []Reference, lookup Lookup) (Result, error) {
	mac, res, err := compute(key, namespace, refs, lookup)
	if err != nil || mac == nil {
		return res, err
	}
	res.Checksum = Version + ":" + KeyID(key) + ":" + hex.EncodeToString(mac)
	return res, nil
}

// compute looks up each canonical ref, appends it to the pre-image of
// namespace, and returns the HMAC (nil when there are no refs) and the
// missing sources.
func compute(key []byte, namespace string, refs []Reference, lookup Lookup) ([]byte, Result, error) {
	if len(key) == 0 {
		return nil, Result{}, errors.New("hasher: empty HMAC key")
	}
	refs = canonical(refs)
	if len(refs) == 0 {
		return nil, Result{}, nil
	}
	if lookup == nil {
		return nil, Result{}, errors.New("hasher: nil Lookup")
	}

	var (
		pre     = newPreimage(namespace, len(refs))
		missing []Source
	)
	for _, ref := range refs {
		c, found, err := lookup(ref.Source)
		if err != nil {
			return nil, Result{}, fmt.Errorf("hasher: look up %s: %w", ref.Source, err)
		}
		if !found {
			// A lookup that reports absence should not contribute
			// content; make sure stale data cannot leak in.
			c = Content{}
			if !ref.Optional {
				missing = append(missing, ref.Source)
			}
		}
		pre.addSource(ref, c, found)
	}

	mac := hmac.New(sha256.New, key)
	mac.Write(pre.bytes())
	return mac.Sum(nil), Result{Missing: missing}, nil
}

// canonical merges and sorts refs without touching the caller's slices, so
// that the pre-image depends only on what is read, not on how it was listed.
func canonical(refs []Reference) []Reference {
	set := newRefSet(len(refs))
	for _, r := range refs {
		how := read{optional: r.Optional, envOnly: r.EnvOnly}
		if r.AllKeys {
			set.addWhole(r.Source, how)
		} else {
			set.addKeys(r.Source, how, r.Keys...)
		}
	}
	return set.list()
}
