package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/confighash/confighash/e2e/controlplane"
	"github.com/confighash/confighash/e2e/framework"
)

// execWith starts a throwaway control plane with confighash running on it
// (or uses the cluster named by CONFIGHASH_E2E_KUBECONFIG, exactly as the e2e
// specs do), runs argv with KUBECONFIG and CONFIGHASH_E2E_KUBECONFIG pointing
// at it, and tears everything down again. It is how suites that cannot live
// in the main module (the Argo CD diff proof needs another Go toolchain) get
// the same cluster set-up as the main e2e specs.
//
// With rollouts, Argo Rollouts' CRDs are installed and its controller runs
// for the command's duration, so that the command can hold Rollouts to
// what it holds Deployments to.
func execWith(ctx context.Context, argv []string, rollouts bool, stderr io.Writer) error {
	if err := needCommand(argv); err != nil {
		return err
	}
	start := time.Now()
	env, err := framework.Setup(ctx, stderr)
	if err != nil {
		return fmt.Errorf("setting up the cluster: %w", err)
	}
	runErr := func() error {
		// With waves on, as shipped: each re-stamp then writes its
		// confighash.dev/rollout record, which the Argo CD proof holds to
		// no diff too. A lone reader is its change's canary, so its
		// re-stamp waits for nothing, node or none.
		if err := env.Confighash.Start(ctx, "--max-wave-size=16"); err != nil {
			return fmt.Errorf("starting confighash: %w", err)
		}
		if rollouts {
			stop, err := startRollouts(ctx, env, stderr)
			if err != nil {
				return err
			}
			defer func() {
				if err := stop(); err != nil {
					fmt.Fprintln(stderr, "cluster: stopping the Rollouts controller:", err)
				}
			}()
		}
		fmt.Fprintf(stderr, "cluster: control plane and confighash ready in %s; running %q\n", time.Since(start).Round(time.Millisecond), argv)
		return runAgainst(ctx, argv, env.Kubeconfig, func() { env.DumpLogs(stderr) })
	}()
	var teardownErr error
	if err := env.Teardown(); err != nil {
		teardownErr = fmt.Errorf("tearing down: %w", err)
	}
	return afterTeardown(runErr, teardownErr, stderr)
}

// startRollouts installs Argo Rollouts' CRDs and starts its controller
// against env, its log in a temporary directory that is removed with it.
func startRollouts(ctx context.Context, env *framework.Env, stderr io.Writer) (stop func() error, err error) {
	r, err := controlplane.EnsureRollouts(ctx, stderr)
	if err != nil {
		return nil, err
	}
	if err := r.InstallCRDs(ctx, env.KubectlPath, env.Kubeconfig); err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "confighash-rollouts-")
	if err != nil {
		return nil, fmt.Errorf("creating the Rollouts controller's directory: %w", err)
	}
	stopController, err := controlplane.StartRollouts(ctx, r, env.Kubeconfig, dir)
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	return func() error {
		err := stopController()
		return errors.Join(err, os.RemoveAll(dir))
	}, nil
}
