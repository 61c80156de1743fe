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

// ReadKeys is the ReadersIndex function: a pure map from a workload to the
// sources it reads. Opted-out workloads read nothing, as far as the hook is
// concerned, and nor do those reading more than workload.MaxSources, which
// the webhook does not stamp either. Malformed include/exclude entries are
// ignored here; the webhook reports them to the user.
func ReadKeys(obj client.Object) []string {
	t, ok := workload.PodTemplate(obj)
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
