// Package main is `make demo`: the whole confighash story on a local cluster
// with a real node, confighash deployed from its own image and manifests,
// narrated as the kubectl commands a user would type, with the sample app's
// log before and after each config change.
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

//go:embed deployment.yaml
var deploymentYAML string

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Stdout)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(1)
	}
}
