package pinner

import (
	"context"
	"encoding/json"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/confighash/confighash/hasher"
	"github.com/confighash/confighash/internal/contract"
)

// seal adds to an existing snapshot the label label=value (when label is
// set) and owner (when it is not one yet), in one JSON patch that holds
// only if the snapshot is still the one read (its resourceVersion): its
// other labels and owners, another writer's, are kept.
func (p *Pinner) seal(ctx context.Context, kind hasher.Kind, meta metav1.ObjectMeta, label, value string, owner metav1.OwnerReference) error {
	ops := []patchOp{{Op: "test", Path: "/metadata/resourceVersion", Value: meta.ResourceVersion}}
	if label != "" {
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
	obj := client.Object(&corev1.ConfigMap{})
	if kind == hasher.Secret {
		obj = &corev1.Secret{}
	}
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
