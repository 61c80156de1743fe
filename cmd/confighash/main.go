// Package main is the confighash binary: the admission webhook, the
// config-update hook and the status command.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/confighash/confighash/cmd/confighash/app"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := app.Run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "confighash:", err)
		os.Exit(app.ExitCode(err))
	}
}
