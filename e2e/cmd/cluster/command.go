package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"

	"github.com/confighash/confighash/e2e/framework"
)

// exitError carries a child's exit code through run, so that `cluster exec`
// exits the way the command it ran did.
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("command exited with status %d", e.code) }

// needCommand refuses an exec with nothing to run, before a cluster is set
// up for it.
func needCommand(argv []string) error {
	if len(argv) == 0 {
		return errors.New("exec: want a command after --\n" + usage)
	}
	return nil
}

// runAgainst runs argv with KUBECONFIG and CONFIGHASH_E2E_KUBECONFIG naming
// kubeconfig. When the command fails, dumpLogs shows what the cluster's
// components said before its exit code is carried out.
func runAgainst(ctx context.Context, argv []string, kubeconfig string, dumpLogs func()) error {
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig, framework.KubeconfigEnv+"="+kubeconfig)
	err := cmd.Run()
	if exitErr := (*exec.ExitError)(nil); errors.As(err, &exitErr) {
		dumpLogs()
		return exitError{code: exitErr.ExitCode()}
	}
	if err != nil {
		return fmt.Errorf("running %q: %w", argv, err)
	}
	return nil
}

// afterTeardown is the result of a run whose cluster was torn down with
// teardownErr: the command's own result wins, and what was left behind is
// still said.
func afterTeardown(runErr, teardownErr error, stderr io.Writer) error {
	if teardownErr == nil {
		return runErr
	}
	if runErr == nil {
		return teardownErr
	}
	fmt.Fprintln(stderr, "cluster:", teardownErr)
	return runErr
}
