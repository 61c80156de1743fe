package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/confighash/confighash/e2e/controlplane"
	"github.com/confighash/confighash/e2e/images"
)

// stateDirName is the cluster's state directory under the repository root:
// fixed, so that `down` and other shells find what `up` started.
const stateDirName = ".cluster"

const usage = `usage: cluster <command>

commands:
  build [controlplane|controlplane-oldest|rollouts|argocd|helm]...
          build those binaries into bin/, in the order given, skipping the
          ones already built (default: controlplane; the first cold build
          of the control plane takes ~15 min, Argo Rollouts ~5, Argo CD ~20,
          Helm ~2; controlplane-oldest is the oldest Kubernetes minor the
          chart claims, control plane only, for make e2e-oldest: ~7 min on
          idle cores, 23 on a busy machine)
  up      start a detached control plane and node (root) with its state in .cluster/,
          with the sample app's and confighash's images imported
          (confighash.local/sampleapp:e2e, confighash.local/confighash:e2e)
  image [--ref REF] BINARY
          import a local static binary into that node as an image: the binary
          at /<its name>, as the entrypoint, user 65532; REF defaults to
          confighash.local/<its name>:dev
  down    stop that control plane and node, undo the node's host changes, delete .cluster/
  exec [--rollouts | --node] -- COMMAND [ARG...]
          start a throwaway control plane with confighash running, run
          COMMAND with KUBECONFIG set, then tear everything down; with
          --rollouts, also install Argo Rollouts' CRDs and run its controller
          (built on first use, ~5 min); with --node, a control plane and a
          node (root; one node per machine) with confighash deployed from its
          self-managed overlay and pinning component, as a user runs it (a
          namespace pins only when labelled for it), and the sample app's image`

func run(ctx context.Context, args []string) error {
	if len(args) == 0 || (args[0] != "exec" && args[0] != "image" && args[0] != "build" && len(args) != 1) {
		return errors.New(usage)
	}
	root, err := controlplane.RepoRoot()
	if err != nil {
		return err
	}
	stateDir := filepath.Join(root, stateDirName)
	switch args[0] {
	case "build":
		return build(ctx, root, args[1:])
	case "up":
		return up(ctx, root, stateDir, os.Stdout, os.Stderr)
	case "down":
		return down(ctx, stateDir, os.Stdout, os.Stderr)
	case "image":
		return image(ctx, stateDir, args[1:], os.Stdout)
	case "exec":
		argv := args[1:]
		var opt string
		if len(argv) > 0 && (argv[0] == "--rollouts" || argv[0] == "--node") {
			opt, argv = argv[0], argv[1:]
		}
		if len(argv) > 0 && argv[0] == "--" {
			argv = argv[1:]
		}
		if opt == "--node" {
			return execOnNode(ctx, argv, os.Stderr)
		}
		return execWith(ctx, argv, opt == "--rollouts", os.Stderr)
	case "-h", "-help", "--help", "help":
		fmt.Println(usage)
		return nil
	default:
		return fmt.Errorf("unknown command %q\n%s", args[0], usage)
	}
}

func up(ctx context.Context, root, stateDir string, stdout, stderr io.Writer) error {
	pids, err := controlplane.DetachedPIDs(stateDir)
	if err != nil {
		return err
	}
	if len(pids) > 0 {
		return fmt.Errorf("a cluster is already running in %s (pids %v); run `go run ./e2e/cmd/cluster down` first", stateDir, pids)
	}
	bins, err := controlplane.EnsureBinaries(ctx, root, stderr)
	if err != nil {
		return err
	}
	// Leftovers of a crashed or half-stopped cluster would confuse etcd (old
	// member data) and the reader (old logs); start from scratch.
	if err := os.RemoveAll(stateDir); err != nil {
		return fmt.Errorf("removing stale %s: %w", stateDir, err)
	}
	// With a node, so that real pods can be poked at; it needs root.
	cp, err := controlplane.Start(ctx, bins, controlplane.Options{Dir: stateDir, Detached: true, Node: true, Progress: stderr})
	if err != nil {
		return err
	}
	for _, p := range cp.StartupPhases() {
		fmt.Fprintf(stderr, "  %-28s %s\n", p.Name, p.Duration.Round(time.Millisecond))
	}
	fmt.Fprintf(stderr, "  logs in %s\n", filepath.Join(cp.Dir, "logs"))
	// Something to run: no registry outlives this process, so the images
	// are imported into the node, as the sandbox image is.
	for _, spec := range []images.Spec{images.SampleApp(), images.Confighash()} {
		fmt.Fprintf(stderr, "building and importing image %s…\n", spec.Ref)
		tar, err := images.Build(ctx, root, filepath.Join(cp.Dir, "images"), spec)
		if err != nil {
			return fmt.Errorf("%w (the cluster is up; `cluster down` stops it)", err)
		}
		if err := cp.ImportImage(ctx, tar); err != nil {
			return fmt.Errorf("%w (the cluster is up; `cluster down` stops it)", err)
		}
	}
	fmt.Fprintf(stdout, "cluster up: export KUBECONFIG=%s\n", cp.Kubeconfig)
	fmt.Fprintf(stdout, "  images: %s, %s; more with `go run ./e2e/cmd/cluster image BINARY`\n", images.SampleApp().Ref, images.Confighash().Ref)
	fmt.Fprintf(stdout, "  kubectl: %s\n", cp.Kubectl)
	return nil
}

// down stops the cluster in bounded time (slow steps say so on stderr);
// Ctrl-C kills what still runs at once and leaves the rest to a second call.
func down(ctx context.Context, stateDir string, stdout, stderr io.Writer) error {
	if err := controlplane.StopDetached(ctx, stateDir, stderr); err != nil {
		return err
	}
	if err := os.RemoveAll(stateDir); err != nil {
		return fmt.Errorf("removing %s: %w", stateDir, err)
	}
	fmt.Fprintln(stdout, "cluster down")
	return nil
}

// build builds each named group of binaries in turn; each waits for a build
// of the same binaries already running elsewhere (the harness's build lock)
// and skips the ones already built.
func build(ctx context.Context, root string, names []string) error {
	if len(names) == 0 {
		names = []string{"controlplane"}
	}
	ensure := map[string]func() error{
		"controlplane": func() error { _, err := controlplane.EnsureBinaries(ctx, root, os.Stderr); return err },
		"controlplane-oldest": func() error {
			_, err := controlplane.EnsureKubernetes(ctx, root, controlplane.OldestKubernetesVersion, os.Stderr)
			return err
		},
		"rollouts": func() error { _, err := controlplane.EnsureRollouts(ctx, os.Stderr); return err },
		"argocd":   func() error { _, err := controlplane.EnsureArgoCD(ctx, os.Stderr); return err },
		"helm":     func() error { _, err := controlplane.EnsureHelm(ctx, os.Stderr); return err },
	}
	for _, name := range names {
		if ensure[name] == nil {
			return fmt.Errorf("build: unknown binaries %q (want controlplane, controlplane-oldest, rollouts, argocd or helm)\n%s", name, usage)
		}
	}
	for _, name := range names {
		if err := ensure[name](); err != nil {
			return err
		}
	}
	return nil
}
