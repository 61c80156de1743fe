package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/confighash/confighash/e2e/framework"
)

// execOnNode is execWith on a cluster with a node: a throwaway control plane
// and node (framework.SetupNode, as e2e/incluster uses), confighash deployed
// from its self-managed overlay with its shipped flags (waves on) and the
// pinning component, and the sample app's image imported, for suites outside the main module whose
// specs need pods to run (the Argo CD controller specs). The command gets
// KUBECONFIG and CONFIGHASH_E2E_KUBECONFIG. Teardown must leave the machine
// as it found it: anything left behind fails the run, as in e2e/incluster.
func execOnNode(ctx context.Context, argv []string, stderr io.Writer) error {
	if err := needCommand(argv); err != nil {
		return err
	}
	start := time.Now()
	env, err := framework.SetupNode(ctx, stderr)
	if err != nil {
		return fmt.Errorf("setting up the cluster with a node: %w", err)
	}
	runErr := func() error {
		// Pinning is opt-in per namespace (confighash.dev/pinning=enabled
		// and a RoleBinding of confighash-pinner), so only the specs that
		// ask for it pin; the others run as without the component.
		if err := env.Deploy(ctx, framework.SelfManagedOverlay, framework.PinningComponent); err != nil {
			env.DumpNodeLogs(ctx, stderr)
			return fmt.Errorf("deploying confighash: %w", err)
		}
		fmt.Fprintf(stderr, "cluster: control plane, node and confighash (%s, %s) ready in %s; running %q\n",
			framework.SelfManagedOverlay, framework.PinningComponent, time.Since(start).Round(time.Millisecond), argv)
		return runAgainst(ctx, argv, env.Kubeconfig, func() { env.DumpNodeLogs(context.WithoutCancel(ctx), stderr) })
	}()
	var errs []error
	if err := env.Teardown(); err != nil {
		errs = append(errs, fmt.Errorf("tearing down: %w", err))
	}
	if left := env.ControlPlane.Leftovers(); len(left) > 0 {
		errs = append(errs, fmt.Errorf("teardown left behind:\n  %s", strings.Join(left, "\n  ")))
	}
	return afterTeardown(runErr, errors.Join(errs...), stderr)
}
