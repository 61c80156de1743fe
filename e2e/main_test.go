//go:build e2e

// Package e2e holds the end-to-end specs. They run against the local control
// plane by default, of the Kubernetes release CONFIGHASH_E2E_KUBERNETES
// names (make e2e-oldest), and against any cluster named by
// CONFIGHASH_E2E_KUBECONFIG (make e2e-kind).
package e2e

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/confighash/confighash/e2e/framework"
)

// env is shared by every spec: starting a control plane per spec would
// dominate the run.
var env *framework.Env

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	start := time.Now()
	var err error
	opts := framework.Options{KubernetesVersion: os.Getenv(framework.KubernetesEnv)}
	if env, err = framework.SetupWith(ctx, os.Stderr, opts); err != nil {
		fmt.Fprintln(os.Stderr, "e2e setup:", err)
		return 1
	}
	// Teardown runs even when specs fail; child processes also carry a
	// parent-death signal in case this process is killed outright.
	defer func() {
		if err := env.Teardown(); err != nil {
			fmt.Fprintln(os.Stderr, "e2e teardown:", err)
		}
	}()
	if err := env.Confighash.Start(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "e2e setup:", err)
		return 1
	}
	fmt.Fprintf(os.Stderr, "e2e: control plane and confighash ready in %s (kubeconfig %s)\n", time.Since(start).Round(time.Millisecond), env.Kubeconfig)
	code := m.Run()
	if code != 0 {
		env.DumpLogs(os.Stderr)
	}
	return code
}
