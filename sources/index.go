package sources

import (
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/confighash/confighash/hasher"
	"github.com/confighash/confighash/workload"
)

// ReadersIndex is the field index over workloads whose keys are the sources
// they read ("configmap/NAME", "secret/NAME"). The hook asks it "who reads
// this?" instead of listing every workload in the namespace.
const ReadersIndex = "confighash.dev/sources"

// IndexKey is the ReadersIndex key of a source.
func IndexKey(s hasher.Source) string { return s.String() }

// ReadKeys is the ReadersIndex function for the built-in kinds: a pure map from a workload to the
// sources it reads. Opted-out workloads read nothing, as far as the hook is
// concerned, and nor do those reading more than workload.MaxSources, which
// the webhook does not stamp either. Malformed include/exclude entries are
// ignored here; the webhook reports them to the user.
func ReadKeys(obj client.Object) []string {
	t, ok := workload.PodTemplate(obj)
	return readKeys(obj, t, ok)
}

// ReadKeysOf is the ReadersIndex function for objects of kind k, custom
// kinds included.
func ReadKeysOf(k workload.Kind) client.IndexerFunc {
	return func(obj client.Object) []string {
		t, ok := k.PodTemplate(obj)
		return readKeys(obj, t, ok)
	}
}

func readKeys(obj client.Object, t workload.Template, ok bool) []string {
	if !ok || workload.OptedOut(obj.GetAnnotations()) {
		return nil
	}
	refs, _ := hasher.References(t.Spec, obj.GetAnnotations())
	if len(refs) > workload.MaxSources {
		return nil
	}
	keys := make([]string, 0, len(refs))
	for _, r := range refs {
		keys = append(keys, IndexKey(r.Source))
	}
	return keys
}
