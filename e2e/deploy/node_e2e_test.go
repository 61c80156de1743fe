//go:build e2e

package deploy

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/confighash/confighash/e2e/framework"
)

// startNode starts a cluster with a node for t (framework.SetupNode) and
// tears it down when t ends, after writing the node's logs if t failed.
func startNode(ctx context.Context, t *testing.T) *framework.NodeEnv {
	t.Helper()
	env, err := framework.SetupNode(ctx, os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// t's own context is done by now.
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if t.Failed() {
			env.DumpNodeLogs(ctx, os.Stderr)
		}
		if err := env.Teardown(); err != nil {
			t.Errorf("tearing down: %v", err)
		}
	})
	return env
}
