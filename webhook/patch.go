package webhook

import (
	"strings"

	"gomodules.xyz/jsonpatch/v2"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/confighash/confighash/internal/contract"
	"github.com/confighash/confighash/internal/workload"
)

// stampPatch answers with a patch that sets (or, for an empty sum, removes)
// the stamp and touches nothing else. It is built by hand rather than by
// diffing a re-marshalled object: a typed round trip can drop unknown
// fields or reorder values, and the patch would then carry those changes too.
func stampPatch(kind workload.Kind, t workload.Template, sum, reason string) admission.Response {
	base := kind.MetaPath
	key := base + "/annotations/" + escape(contract.ChecksumAnnotation)
	var op jsonpatch.JsonPatchOperation
	switch {
	case sum == "":
		op = jsonpatch.NewOperation("remove", key, nil)
	case !t.HasMeta():
		// A custom object's template may omit metadata altogether, and a
		// JSON patch cannot add below a member that is not there.
		op = jsonpatch.NewOperation("add", base, map[string]any{"annotations": map[string]string{contract.ChecksumAnnotation: sum}})
	case t.Meta.Annotations == nil:
		op = jsonpatch.NewOperation("add", base+"/annotations", map[string]string{contract.ChecksumAnnotation: sum})
	default:
		op = jsonpatch.NewOperation("add", key, sum)
	}
	return admission.Patched(reason, op)
}

// escape applies RFC 6901 escaping to one JSON Pointer segment: "~" first,
// so that the "~" of an escaped "/" is not escaped again.
func escape(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}
