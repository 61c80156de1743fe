package app

import (
	"context"
	"errors"
	"fmt"

	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/confighash/confighash/internal/kindcheck"
	"github.com/confighash/confighash/internal/restamp"
	"github.com/confighash/confighash/internal/workload"
)

// checkCustomKinds checks, before anything starts, each kind --workload-kind
// configured (kinds.Configured) whose CRD is installed: a template path that leads nowhere in
// the CRD's schema stops confighash with an error saying so, rather than
// making it a silent no-op. A kind not served yet is checked when the hook
// finds it served. It returns the hook's probe, which checks the same way.
func checkCustomKinds(ctx context.Context, cfg *rest.Config, kinds workload.Registry) (restamp.Probe, error) {
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("creating discovery client: %w", err)
	}
	checker := kindcheck.Checker{Discovery: dc}
	probe := func(ctx context.Context, k workload.Kind) (bool, error) {
		served, err := checker.Served(ctx, k)
		if pe := (*kindcheck.PathError)(nil); errors.As(err, &pe) {
			return served, fmt.Errorf("%w: %w", restamp.ErrBadKind, err)
		}
		return served, err
	}
	logger := log.FromContext(ctx)
	for _, k := range kinds.Configured() {
		served, err := probe(ctx, k)
		switch {
		case errors.Is(err, restamp.ErrBadKind):
			return nil, fmt.Errorf("--workload-kind %s: %w", k.Name(), err)
		case err != nil:
			logger.Error(err, "cannot check custom workload kind now; the hook retries", "kind", k.Name())
		case !served:
			logger.Info("custom workload kind not served yet; watched once its CRD is installed", "kind", k.Name())
		}
	}
	return probe, nil
}
