// Command imagepush builds confighash's image from this source tree and
// pushes it to a registry the user names, without a Docker engine: the same
// image the e2e specs run (a static binary at /confighash, user 65532, one
// image per platform in one index), built in Go by e2e/images. It prints
// the digest it pushed. `make image-push IMG=…` runs it.
//
//	go run ./e2e/cmd/imagepush [-insecure] [-platforms linux/amd64,linux/arm64] REGISTRY/REPOSITORY:TAG
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/confighash/confighash/e2e/images"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "imagepush:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("imagepush", flag.ContinueOnError)
	fs.SetOutput(stderr)
	insecure := fs.Bool("insecure", false, "speak plain HTTP to the registry even if it is not on localhost, a loopback or a private address")
	platforms := fs.String("platforms", "linux/amd64,linux/arm64", "comma-separated platforms of the image index")
	version := fs.String("version", "dev", "the version the binary reports (make passes git describe)")
	commit := fs.String("commit", "", "the commit the binary reports")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return errors.New("want one image reference, e.g. registry.example.com/confighash:dev")
	}
	ref := fs.Arg(0)
	ps, err := parsePlatforms(*platforms)
	if err != nil {
		return err
	}
	root, err := os.Getwd()
	if err != nil {
		return fmt.Errorf("locating the repository: %w", err)
	}
	if _, err := os.Stat("go.mod"); err != nil {
		return fmt.Errorf("run it from the repository's root (make image-push does): %w", err)
	}
	dir, err := os.MkdirTemp("", "confighash-image-")
	if err != nil {
		return fmt.Errorf("creating a build directory: %w", err)
	}
	defer os.RemoveAll(dir)

	spec := images.ConfighashVersion(*version, *commit)
	spec.Ref = ref
	fmt.Fprintf(stderr, "building %s for %s…\n", spec.Package, *platforms)
	idx, err := images.BuildIndex(ctx, root, dir, spec, ps)
	if err != nil {
		return err
	}
	pushed, err := images.PushTo(ctx, ref, idx, *insecure)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "pushed %s (%s)\ndigest %s\n", ref, *platforms, pushed.DigestStr())
	fmt.Fprintf(stdout, "pin it: %s\n", pushed)
	return nil
}

// parsePlatforms reads "os/arch,…"; only linux on amd64 and arm64 is built.
func parsePlatforms(s string) ([]images.Platform, error) {
	var out []images.Platform
	for _, p := range strings.Split(s, ",") {
		osName, arch, ok := strings.Cut(strings.TrimSpace(p), "/")
		if _, known := images.Machine(arch); !ok || osName != "linux" || !known {
			return nil, fmt.Errorf("platform %q: want linux/amd64 or linux/arm64", p)
		}
		out = append(out, images.Platform{OS: osName, Architecture: arch})
	}
	return out, nil
}
