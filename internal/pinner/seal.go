package pinner

import (
	"context"
	"encoding/json"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/confighash/confighash/hasher"
	"github.com/confighash/confighash/internal/contract"
)

// sealTries bounds the patches of one snapshot for one pod: the first pods
// of many revisions that share a snapshot all add themselves at once.
const sealTries = 4

// seal makes the snapshot meta names carry the label label=value (when
// label is set) and owner. Each try reads it again, verified, and patches
// only what is missing; a patch that failed (a concurrent one made the list
// it appended to, say) is tried again on what is there now.
func (p *Pinner) seal(ctx context.Context, kind hasher.Kind, meta metav1.ObjectMeta, label, value string, owner metav1.OwnerReference) error {
	var err error
	for try := range sealTries {
		if try > 0 {
			if _, meta, err = p.verified(ctx, meta.Namespace, meta.Name, kind); err != nil {
				return err
			}
		}
		if (label == "" || meta.Labels[label] == value) && owns(&meta, owner) {
			return nil
		}
		if err = p.patch(ctx, kind, meta, label, value, owner); err == nil {
			return nil
		}
	}
	return err
}

// patch adds what meta lacks in one JSON patch that keeps every other label
// and owner, another writer's.
func (p *Pinner) patch(ctx context.Context, kind hasher.Kind, meta metav1.ObjectMeta, label, value string, owner metav1.OwnerReference) error {
	var ops []patchOp
	if label != "" && meta.Labels[label] != value {
		ops = append(ops, patchOp{Op: "add", Path: "/metadata/labels/" + escape(label), Value: value})
	}
	switch {
	case owns(&meta, owner):
	case len(meta.OwnerReferences) == 0:
		ops = append(ops, patchOp{Op: "add", Path: "/metadata/ownerReferences", Value: []metav1.OwnerReference{owner}})
	default:
		ops = append(ops, patchOp{Op: "add", Path: "/metadata/ownerReferences/-", Value: owner})
	}
	body, err := json.Marshal(ops)
	if err != nil {
		return err
	}
	obj := object(kind)
	obj.SetNamespace(meta.Namespace)
	obj.SetName(meta.Name)
	return p.Client.Patch(ctx, obj, client.RawPatch(types.JSONPatchType, body), client.FieldOwner(contract.FieldManager))
}

type patchOp struct {
	Op    string `json:"op"`
	Path  string `json:"path"`
	Value any    `json:"value"`
}

// escape makes a map key one JSON pointer token (RFC 6901).
func escape(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}
