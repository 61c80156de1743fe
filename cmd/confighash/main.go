// Package main is the confighash binary: the admission webhook, the
// config-update hook and the status command.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/confighash/confighash/cmd/confighash/app"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	args := os.Args[1:]
	// Installed as kubectl-confighash, the binary is the kubectl plugin
	// `kubectl confighash`, which is the status command, or preview, or
	// version.
	if strings.TrimSuffix(filepath.Base(os.Args[0]), ".exe") == "kubectl-confighash" && (len(args) == 0 || (args[0] != "status" && args[0] != "preview" && args[0] != "version")) {
		args = append([]string{"status"}, args...)
	}
	err := app.Run(ctx, args, os.Stdout, os.Stderr)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "confighash:", err)
		os.Exit(app.ExitCode(err))
	}
}
