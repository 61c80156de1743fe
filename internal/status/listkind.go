package status

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/confighash/confighash/internal/workload"
)

// listKind lists the objects of kind k in namespace ns ("" for all) into
// list. A custom kind whose CRD is not installed has none: list is left
// empty.
func listKind(ctx context.Context, c client.Reader, k workload.Kind, ns string, list client.ObjectList) error {
	var opts []client.ListOption
	if ns != "" {
		opts = append(opts, client.InNamespace(ns))
	}
	err := c.List(ctx, list, opts...)
	if k.Unstructured() && meta.IsNoMatchError(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("listing %s: %w", k.Resource, err)
	}
	return nil
}
