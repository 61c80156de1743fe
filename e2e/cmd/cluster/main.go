// Package main is the `cluster` command, which runs the e2e control plane
// outside of `go test`, for exploring the API or debugging a test by hand:
//
//	go run ./e2e/cmd/cluster build   # only build the control-plane binaries into bin/ (also: build controlplane-oldest rollouts argocd)
//	go run ./e2e/cmd/cluster up      # start a detached cluster in .cluster/
//	go run ./e2e/cmd/cluster image ./mybinary   # import a static binary into its node as an image
//	go run ./e2e/cmd/cluster down    # stop it and delete .cluster/
//	go run ./e2e/cmd/cluster exec -- go test ./...   # run a command against a throwaway cluster with confighash
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:])
	stop()
	var exit exitError
	switch {
	case errors.As(err, &exit):
		os.Exit(exit.code)
	case err != nil:
		fmt.Fprintln(os.Stderr, "cluster:", err)
		os.Exit(1)
	}
}
