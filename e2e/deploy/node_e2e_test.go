//go:build e2e

package deploy

import (
	"context"
	"os"
	"testing"

	"github.com/confighash/confighash/e2e/framework"
)

// setupNode starts a cluster with a node for one spec, torn down when the
// spec ends, after its node's logs when it failed.
func setupNode(ctx context.Context, t *testing.T) *framework.NodeEnv {
	t.Helper()
	env, err := framework.SetupNode(ctx, os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			env.DumpNodeLogs(context.Background(), os.Stderr)
		}
		if err := env.Teardown(); err != nil {
			t.Errorf("tearing down: %v", err)
		}
	})
	return env
}
