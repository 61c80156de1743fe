//go:build e2e

// Package incluster holds the specs that need real pods: confighash deployed
// from its own image and its self-managed overlay, with the pinning
// component, onto a local cluster with a kubelet node, and a sample app whose
// log shows which config its pods read.
// They prove what users care about: after a config change, the pods run with
// the new value.
package incluster

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/confighash/confighash/e2e/framework"
)

// env is shared by every spec: one cluster with a node and one deployment of
// confighash; starting them takes about a minute.
var env *framework.NodeEnv

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) (code int) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	start := time.Now()
	var err error
	var opts framework.NodeOptions
	if os.Getenv("CONFIGHASH_BENCH") != "" {
		// The pinning soak (TestBenchPinningSoak) runs 200 pods.
		opts.MaxPods = 250
	}
	if env, err = framework.SetupNodeWith(ctx, os.Stderr, opts); err != nil {
		fmt.Fprintln(os.Stderr, "incluster setup:", err)
		return 1
	}
	// Stop must leave the machine as it found it: a leaked mount, chain or
	// bridge breaks the next run, so it fails this one.
	defer func() {
		if err := env.Teardown(); err != nil {
			fmt.Fprintln(os.Stderr, "incluster teardown:", err)
			code = 1
		}
		if left := env.ControlPlane.Leftovers(); len(left) > 0 {
			fmt.Fprintf(os.Stderr, "incluster teardown left behind:\n  %s\n", strings.Join(left, "\n  "))
			code = 1
		}
	}()
	deployStart := time.Now()
	// Pinning is on for the whole lane: namespaces without its label behave
	// exactly as before, which every other spec shows.
	if err := env.Deploy(ctx, framework.SelfManagedOverlay, framework.PinningComponent); err != nil {
		fmt.Fprintln(os.Stderr, "incluster deploy:", err)
		env.DumpNodeLogs(ctx, os.Stderr)
		return 1
	}
	fmt.Fprintf(os.Stderr, "incluster: confighash deployed from %s with %s and Ready in %s (cluster and images %s)\n",
		framework.SelfManagedOverlay, framework.PinningComponent, time.Since(deployStart).Round(time.Millisecond), deployStart.Sub(start).Round(time.Millisecond))
	code = m.Run()
	if code != 0 {
		env.DumpNodeLogs(ctx, os.Stderr)
	}
	return code
}
