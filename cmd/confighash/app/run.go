// Package app is the confighash command line: flag parsing into options and
// the subcommands. main adds only the signal context, the kubectl plugin
// name (kubectl-confighash means status, or preview) and the exit code
// (ExitCode); the rest is Run, so tests can run the binary's code
// in-process.
package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/pflag"
)

const usage = `usage: confighash [serve] [flags]   run the webhook and the config-update hook
       confighash status [flags]    explain why workloads did or did not roll
       confighash preview -f FILE   show what applying a changed ConfigMap or Secret would roll
       confighash version           print the version, the commit and the Go release
`

// Run runs the command line args (without the program name).
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cmd := "serve"
	switch {
	case len(args) == 1 && (args[0] == "-h" || args[0] == "--help"):
		cmd = "help"
	case len(args) > 0 && !strings.HasPrefix(args[0], "-"):
		cmd, args = args[0], args[1:]
	}
	switch cmd {
	case "serve":
		opts := DefaultOptions()
		fs := pflag.NewFlagSet("confighash serve", pflag.ContinueOnError)
		fs.SetOutput(stderr)
		opts.bind(fs)
		if err := fs.Parse(args); errors.Is(err, pflag.ErrHelp) {
			return nil // pflag printed the flags
		} else if err != nil {
			return usageError{err}
		}
		return Serve(ctx, opts)
	case "status":
		return Status(ctx, args, stdout, stderr)
	case "preview":
		return Preview(ctx, args, nil, stdout, stderr)
	case "version":
		return printVersion(stdout, Version())
	case "help":
		_, err := io.WriteString(stdout, usage)
		return err
	}
	return usageError{fmt.Errorf("unknown command %q\n%s", cmd, usage)}
}

// usageError marks bad command lines, which exit 2 like flag errors do.
type usageError struct{ error }

func (e usageError) Unwrap() error { return e.error }

// exitCoder lets a command choose its exit code (status exits 1 when
// something is stale).
type exitCoder interface{ ExitCode() int }

// ExitCode maps an error from Run to a process exit code.
func ExitCode(err error) int {
	var ue usageError
	if errors.As(err, &ue) {
		return 2
	}
	var ec exitCoder
	if errors.As(err, &ec) {
		return ec.ExitCode()
	}
	return 1
}
