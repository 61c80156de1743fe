package sources

import (
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/confighash/confighash/hasher"
	"github.com/confighash/confighash/internal/workload"
)

// ReadersIndex is the field index over workloads whose keys are the sources
// they read ("configmap/NAME", "secret/NAME"). The hook asks it "who reads
// this?" instead of listing every workload in the namespace.
const ReadersIndex = "confighash.dev/sources"

// IndexKey is the ReadersIndex key of a source.
func IndexKey(s hasher.Source) string { return s.String() }

// ReadKeysOf is the ReadersIndex function for objects of kind k: a pure map
// from a workload to the sources it reads. Workloads confighash reads
// nothing for (workload.ReadsOf: opted out, over workload.MaxSources, no
// template) read nothing as far as the hook is concerned, since the webhook
// does not stamp them either. Malformed include/exclude entries are ignored
// here; the webhook reports them to the user.
func ReadKeysOf(k workload.Kind) client.IndexerFunc {
	return func(obj client.Object) []string {
		r := workload.ReadsOf(k, obj)
		if r.Skip != workload.NotSkipped {
			return nil
		}
		keys := make([]string, 0, len(r.Refs))
		for _, ref := range r.Refs {
			keys = append(keys, IndexKey(ref.Source))
		}
		return keys
	}
}
