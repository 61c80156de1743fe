package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"time"

	"github.com/confighash/confighash/e2e/framework"
)

// exitError carries a child's exit code through run, so that `cluster exec`
// exits the way the command it ran did.
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("command exited with status %d", e.code) }

// execWith starts a throwaway control plane with confighash running on it
// (or uses the cluster named by CONFIGHASH_E2E_KUBECONFIG, exactly as the e2e
// specs do), runs argv with KUBECONFIG and CONFIGHASH_E2E_KUBECONFIG pointing
// at it, and tears everything down again. It is how suites that cannot live
// in the main module (the Argo CD diff proof needs another Go toolchain) get
// the same cluster set-up as the main e2e specs.
func execWith(ctx context.Context, argv []string, stderr io.Writer) error {
	if len(argv) == 0 {
		return errors.New("exec: want a command after --\n" + usage)
	}
	start := time.Now()
	env, err := framework.Setup(ctx, stderr)
	if err != nil {
		return fmt.Errorf("setting up the cluster: %w", err)
	}
	runErr := func() error {
		if err := env.Confighash.Start(ctx); err != nil {
			return fmt.Errorf("starting confighash: %w", err)
		}
		fmt.Fprintf(stderr, "cluster: control plane and confighash ready in %s; running %q\n", time.Since(start).Round(time.Millisecond), argv)
		cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
		cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
		cmd.Env = append(os.Environ(), "KUBECONFIG="+env.Kubeconfig, framework.KubeconfigEnv+"="+env.Kubeconfig)
		err := cmd.Run()
		if exitErr := (*exec.ExitError)(nil); errors.As(err, &exitErr) {
			env.DumpLogs(stderr)
			return exitError{code: exitErr.ExitCode()}
		}
		if err != nil {
			return fmt.Errorf("running %q: %w", argv, err)
		}
		return nil
	}()
	if err := env.Teardown(); err != nil {
		if runErr == nil {
			return fmt.Errorf("tearing down: %w", err)
		}
		// The command's own result wins; still say what was left behind.
		fmt.Fprintln(stderr, "cluster: tearing down:", err)
	}
	return runErr
}
