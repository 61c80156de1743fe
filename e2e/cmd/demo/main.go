// Package main is `make demo`: the whole confighash story on a local cluster
// with a real node, confighash deployed from its own image and manifests,
// narrated as the commands a user would type, with the sample app's log
// before and after each config change: a change rolls exactly its readers,
// in waves; `confighash preview` says so first; a broken value halts at its
// canary while the others keep serving; `confighash status` explains it;
// the fix rolls everyone.
package main

import (
	"context"
	_ "embed"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

//go:embed config.yaml
var configYAML string

// deploymentYAML is a reader of the greeting, NAME and ORDER to fill in.
//
//go:embed deployment.yaml
var deploymentYAML string

//go:embed billing.yaml
var billingYAML string

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Stdout)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(1)
	}
}
