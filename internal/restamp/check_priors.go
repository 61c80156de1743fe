package restamp

import (
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/confighash/confighash/hasher"
	"github.com/confighash/confighash/internal/sources"
)

// prior is a source's content before a change, as the informer's old object
// had it (digests only, like the cache).
type prior struct {
	content hasher.Content
	found   bool
	// known is false when the old object could not be read back.
	known bool
}

// priorOf is the prior of a source whose old object is before, nil when the
// source did not exist.
func priorOf(before client.Object) prior {
	if before == nil {
		return prior{known: true}
	}
	c, err := sources.Content(before)
	if err != nil {
		return prior{}
	}
	return prior{content: c, found: true, known: true}
}

// readUnchanged reports whether the changes seen live for req, whose
// content from before them is before (from its pending entry), left what
// the workload reads as it was: the checksum, under the current key, of
// that content equals fresh. It is how the hook tells, for a
// stamp made under another key, a change its pods read (re-stamp) from one
// they do not (a key they do not read, or a change undone within the
// coalescing window), without comparing with the stamp, which it cannot.
func (r *reconciler) readUnchanged(req Request, before map[hasher.Source]prior, refs []hasher.Reference, lookup hasher.Lookup, fresh string) bool {
	if len(before) == 0 {
		return false
	}
	for _, p := range before {
		if !p.known {
			return false
		}
	}
	then, err := hasher.Checksum(r.key, req.Namespace, refs, func(s hasher.Source) (hasher.Content, bool, error) {
		if p, ok := before[s]; ok {
			return p.content, p.found, nil
		}
		return lookup(s)
	})
	return err == nil && then.Checksum == fresh
}
