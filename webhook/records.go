package webhook

import (
	"slices"

	"gomodules.xyz/jsonpatch/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/confighash/confighash/internal/contract"
	"github.com/confighash/confighash/internal/workload"
)

// recordEdits are the values of the hook's records (contract.Records) an
// answer sets on the workload's own metadata; nil removes one.
type recordEdits map[string]*string

// keptRecords keeps the hook's records on an UPDATE by anyone but the hook
// as the write found them: a record the hook sealed for the workload is not
// replaced or dropped, and none it sealed is brought in. So `kubectl
// rollout undo`, which replaces a Deployment's annotations with the copies
// its ReplicaSet took when it was made, neither erases a hold or a halt in
// force nor brings back a stale one (or a stale rollout record, which would
// tell the waves wrong): a stale copy verifies as well as the live record,
// so it is refused on the way in, where it can still be told. The same
// keeps a `kubectl replace` or an Argo CD Replace=true sync from dropping
// them. Left alone: a change between values that are not the hook's (a
// hand-written value, which the hook ignores anyway, or its removal) and
// confighash.dev/halt: released, a user's command.
//
// It is not a security boundary: the hook's field manager, which anyone
// may name, passes (writtenByConfighash); a stale record that one brings
// back holds only what it held when it was written.
func (h *Handler) keptRecords(kind workload.Kind, oldObj, obj client.Object, req admission.Request) recordEdits {
	if writtenByConfighash(req) {
		return nil
	}
	s := contract.Subject{Kind: kind.Name(), Namespace: req.Namespace, Name: oldObj.GetName(), UID: string(oldObj.GetUID())}
	was, is := oldObj.GetAnnotations(), obj.GetAnnotations()
	var edits recordEdits
	for _, k := range contract.Records() {
		ov, had := was[k]
		nv, has := is[k]
		if had == has && ov == nv {
			continue
		}
		if k == contract.HaltAnnotation && has && nv == contract.HaltReleased {
			continue
		}
		hooks := had && contract.Verifies(h.Key, s, k, ov) || has && contract.Verifies(h.Key, s, k, nv)
		if !hooks {
			continue
		}
		if edits == nil {
			edits = recordEdits{}
		}
		if had {
			edits[k] = &ov
		} else {
			edits[k] = nil
		}
	}
	return edits
}

// onto adds the edits to resp, a patch or an admission, for an object
// whose own annotations are annotations.
func (e recordEdits) onto(resp admission.Response, annotations map[string]string) admission.Response {
	if len(e) == 0 || !resp.Allowed {
		return resp
	}
	keys := make([]string, 0, len(e))
	for k := range e {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if annotations == nil {
		set := map[string]string{}
		for _, k := range keys {
			if v := e[k]; v != nil {
				set[k] = *v
			}
		}
		if len(set) > 0 {
			resp.Patches = append(resp.Patches, jsonpatch.NewOperation("add", "/metadata/annotations", set))
		}
		return resp
	}
	for _, k := range keys {
		path := "/metadata/annotations/" + escape(k)
		switch v := e[k]; {
		case v != nil:
			resp.Patches = append(resp.Patches, jsonpatch.NewOperation("add", path, *v))
		case hasKey(annotations, k):
			resp.Patches = append(resp.Patches, jsonpatch.NewOperation("remove", path, nil))
		}
	}
	return resp
}

func hasKey(m map[string]string, k string) bool {
	_, ok := m[k]
	return ok
}
