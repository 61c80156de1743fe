package waves

import (
	"fmt"
	"maps"
	"slices"

	"github.com/confighash/confighash/hasher"
	"github.com/confighash/confighash/internal/contract"
)

// RolledBack is the reason of the halt recorded on a pinned workload put
// back on one of its live revisions whose stamp names older content
// (`kubectl rollout undo`): its pods read that revision's snapshots. The
// halt names the content of each source it reads as it was at the undo,
// and is a halt like any other for the source's other readers; for the
// workload itself it means "do not roll it forward" until one of those
// sources changes (the fix) or the halt is released.
const RolledBack = "RolledBack"

// ContentIDs is a keyed digest of each source refs read, whole, as lookup
// gives it now (16 hex digits, the checksum's last): what tells one content
// of a source from another in contract.Change, revealing nothing of it.
// The hook and the webhook name changes with it alike.
func ContentIDs(key []byte, namespace string, refs []hasher.Reference, lookup hasher.Lookup) (map[string]string, error) {
	ids := map[string]string{}
	for _, ref := range refs {
		src := ref.Source.String()
		if _, ok := ids[src]; ok {
			continue
		}
		res, err := hasher.Checksum(key, namespace, []hasher.Reference{{Source: ref.Source, AllKeys: true, Optional: true}}, lookup)
		if err != nil {
			return nil, fmt.Errorf("content of %s: %w", src, err)
		}
		ids[src] = res.Checksum[len(res.Checksum)-16:]
	}
	return ids, nil
}

// ChangesOf lists ids (ContentIDs) as changes, sorted by source.
func ChangesOf(ids map[string]string) []contract.Change {
	out := make([]contract.Change, 0, len(ids))
	for _, src := range slices.Sorted(maps.Keys(ids)) {
		out = append(out, contract.Change{Source: src, Content: ids[src]})
	}
	return out
}

// IsRollback reports whether h is a halt in force recorded for a rollback.
func (h Halt) IsRollback() bool {
	return h.State == HaltInForce && h.Record.Reason == RolledBack
}

// KeepsBack reports whether h, a rollback's halt, still keeps its workload
// on the revision it was put back on, given the content its sources hold
// now (ContentIDs): every change it names is still the content of its
// source. Once one of them changes (the fix), or the workload reads a
// source the halt does not name, the workload goes on to the new content
// as any reader does.
func (h Halt) KeepsBack(ids map[string]string) bool {
	if !h.IsRollback() || len(h.Record.Changes) == 0 {
		return false
	}
	for _, c := range h.Record.Changes {
		if id, ok := ids[c.Source]; !ok || id != c.Content {
			return false
		}
	}
	for src := range ids {
		if !slices.ContainsFunc(h.Record.Changes, func(c contract.Change) bool { return c.Source == src }) {
			return false
		}
	}
	return true
}
