package hasher

import (
	"encoding/json"
	"reflect"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/confighash/confighash/internal/contract"
)

// FuzzReferences feeds reference discovery arbitrary pod specs (JSON, as the
// webhook receives them) and include/exclude annotations. No input may
// panic, and the result must be canonical: sources sorted and unique, named,
// key lists sorted and unique and empty for whole reads, the same on a
// second call, EnvOnly only on ConfigMaps, and never more sources than the input could name. Seeds are
// in testdata/fuzz/FuzzReferences.
func FuzzReferences(f *testing.F) {
	f.Fuzz(func(t *testing.T, spec []byte, include, exclude string) {
		var ps corev1.PodSpec
		if json.Unmarshal(spec, &ps) != nil {
			return
		}
		ann := map[string]string{contract.IncludeAnnotation: include, contract.ExcludeAnnotation: exclude}
		refs, _ := References(&ps, ann)
		for i, r := range refs {
			if r.Name == "" || (r.Kind != ConfigMap && r.Kind != Secret) {
				t.Fatalf("ref %d is no source: %+v", i, r)
			}
			if i > 0 && compareSources(refs[i-1].Source, r.Source) >= 0 {
				t.Fatalf("refs not sorted and unique at %d: %v then %v", i, refs[i-1].Source, r.Source)
			}
			if r.EnvOnly && r.Kind != ConfigMap {
				t.Fatalf("%v is env-only, which only a ConfigMap can be", r.Source)
			}
			if r.AllKeys && len(r.Keys) > 0 {
				t.Fatalf("%v is read whole but lists keys %q", r.Source, r.Keys)
			}
			if !slices.IsSorted(r.Keys) || len(slices.Compact(slices.Clone(r.Keys))) != len(r.Keys) {
				t.Fatalf("%v keys not sorted and unique: %q", r.Source, r.Keys)
			}
		}
		// Every source is named somewhere in the input, so there can be no
		// more of them than the input has bytes.
		if len(refs) > len(spec)+len(include) {
			t.Fatalf("%d refs from %d bytes of input", len(refs), len(spec)+len(include))
		}
		again, _ := References(&ps, ann)
		if !reflect.DeepEqual(refs, again) {
			t.Fatalf("References is not deterministic:\n%+v\n%+v", refs, again)
		}
	})
}
