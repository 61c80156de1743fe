// Command release publishes a confighash release to an OCI registry, or
// verifies one, or writes a signing key pair. make release, make
// release-verify and make release-key run it; see docs/releasing.md.
//
//	release publish -version v1.2.3 -registry host/path -key release.key -dist dist …
//	release verify  -version v1.2.3 -registry host/path -pub release.pub
//	release keygen  -dir DIR
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"

	"github.com/confighash/confighash/internal/release"
)

const usage = "usage: release publish|verify|keygen [flags] (-h for each)"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "release:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, stdout io.Writer) error {
	if len(args) == 0 {
		return errors.New(usage)
	}
	fs := flag.NewFlagSet("release "+args[0], flag.ContinueOnError)
	var o release.Options
	var pub, dir string
	fs.StringVar(&o.Version, "version", "", "the release's tag, vX.Y.Z[-pre]")
	fs.StringVar(&o.Registry, "registry", "", "where to push, host[:port]/path")
	fs.BoolVar(&o.PlainHTTP, "plain-http", false, "speak HTTP to the registry (a local one)")
	switch args[0] {
	case "publish":
		fs.StringVar(&o.Commit, "commit", "", "the commit the binaries report")
		fs.StringVar(&o.KeyPath, "key", "", "the PEM ECDSA P-256 private key to sign with")
		fs.StringVar(&o.Root, "root", ".", "the repository root")
		fs.StringVar(&o.Dist, "dist", "dist", "where the SBOM, chart, archives, checksums and krew manifest are left")
		fs.StringVar(&o.CycloneDX, "cyclonedx", "", "the cyclonedx-gomod binary")
		fs.StringVar(&o.DownloadURL, "download-url", "", "where the krew manifest says the archives are (default: the forge's release page for the version)")
	case "verify":
		fs.StringVar(&pub, "pub", "", "the PEM public key the release must be signed with")
	case "keygen":
		fs.StringVar(&dir, "dir", ".", "where to write release.key and release.pub")
	default:
		return errors.New(usage)
	}
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	o.PlainHTTP = o.PlainHTTP || release.Loopback(o.Registry)
	switch args[0] {
	case "publish":
		if o.DownloadURL == "" {
			o.DownloadURL = "https://github.com/confighash/confighash/releases/download/" + o.Version + "/"
		}
		p, err := release.Publish(ctx, o, stdout)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "released %s: image %s, chart %s:%s, plugin %s\n", o.Version, p.Index, p.Chart.Ref, p.Chart.Version, p.Plugin)
		for _, f := range p.Files {
			info, err := os.Stat(f)
			if err != nil {
				return fmt.Errorf("reading %s: %w", f, err)
			}
			fmt.Fprintf(stdout, "  %-60s %9d bytes\n", f, info.Size())
		}
	case "verify":
		if pub == "" {
			return errors.New("no public key: -pub release.pub")
		}
		v, err := release.Verify(ctx, o.Version, o.Registry, pub, o.PlainHTTP)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "verified %s: signed by %s, SBOM signed (%d components), %d plugin files match their checksums: %s\n",
			v.Index, pub, len(v.SBOM.Components), len(v.Files), strings.Join(slices.Sorted(maps.Keys(v.Files)), ", "))
	case "keygen":
		priv, pubPath, err := release.GenerateKeyPair(dir)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "wrote %s (keep it secret) and %s\n", priv, pubPath)
	}
	return nil
}
