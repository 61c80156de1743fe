package kindcheck

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/discovery"

	"github.com/confighash/confighash/internal/workload"
)

// Checker asks the apiserver's discovery and OpenAPI endpoints, which every
// authenticated client may read: confighash needs no RBAC on
// CustomResourceDefinitions for this.
type Checker struct {
	Discovery discovery.DiscoveryInterface
}

// Served reports whether the apiserver serves k now. When it does, k's
// template path is checked against the published schema, and a path that
// leads nowhere is a *PathError. Other errors are the apiserver's, and worth
// a retry.
func (c Checker) Served(ctx context.Context, k workload.Kind) (bool, error) {
	gv := k.GVK.GroupVersion()
	list, err := c.Discovery.ServerResourcesForGroupVersion(gv.String())
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("discovering %s: %w", gv, err)
	}
	found := false
	for _, r := range list.APIResources {
		if r.Name == k.Resource {
			if r.Kind != k.GVK.Kind {
				return true, &PathError{GVK: k.GVK, Path: k.TemplatePath, Why: fmt.Sprintf("resource %s serves kind %s, not %s", k.Resource, r.Kind, k.GVK.Kind)}
			}
			found = true
		}
	}
	if !found {
		return false, nil
	}
	paths, err := c.Discovery.OpenAPIV3().Paths()
	if err != nil {
		return true, fmt.Errorf("listing OpenAPI documents: %w", err)
	}
	p, ok := paths["apis/"+gv.String()]
	if !ok {
		return true, errors.New("the apiserver lists no OpenAPI document for " + gv.String())
	}
	doc, err := p.Schema("application/json")
	if err != nil {
		return true, fmt.Errorf("reading the OpenAPI document of %s: %w", gv, err)
	}
	return true, CheckPath(doc, k.GVK, k.TemplatePath)
}
