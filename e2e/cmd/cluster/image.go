package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"

	"github.com/confighash/confighash/e2e/controlplane"
	"github.com/confighash/confighash/e2e/images"
)

// image imports a local static binary into the node of the cluster that `up`
// started, so that a pod can run it with imagePullPolicy Never (or
// IfNotPresent with a tag other than latest): there is no registry to pull
// from.
func image(ctx context.Context, stateDir string, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("image", flag.ContinueOnError)
	ref := fs.String("ref", "", "image reference (default "+images.Domain+"/<binary's name>:dev)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return errors.New("image: want one binary\n" + usage)
	}
	pids, err := controlplane.DetachedPIDs(stateDir)
	if err != nil {
		return err
	}
	if len(pids) == 0 {
		return fmt.Errorf("no cluster is running in %s; start one with `go run ./e2e/cmd/cluster up`", stateDir)
	}
	tar, imageRef, err := images.BinaryImage(fs.Arg(0), *ref, filepath.Join(stateDir, "images", "user"))
	if err != nil {
		return err
	}
	if err := controlplane.ImportImageDetached(ctx, stateDir, tar); err != nil {
		return err
	}
	base := filepath.Base(fs.Arg(0))
	fmt.Fprintf(stdout, "imported %s as %s; run it with:\n  kubectl run %s --image=%s --image-pull-policy=Never\n", fs.Arg(0), imageRef, base, imageRef)
	return nil
}
