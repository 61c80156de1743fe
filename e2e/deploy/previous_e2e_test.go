//go:build e2e

package deploy

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/confighash/confighash/e2e/images"
)

// PreviousRefEnv names the git revision the upgrade specs start from,
// instead of the one previousRef picks (a release tag, say).
const PreviousRefEnv = "CONFIGHASH_UPGRADE_FROM"

// previousRef is the version a user upgrades from: the parent of the last
// commit that changed the chart or the manifests, so that the upgrade
// applies the most recent change to the objects a user installed. It needs
// the repository's history, which a CI checkout of the whole history has.
func previousRef(ctx context.Context, root string) (string, error) {
	if ref := os.Getenv(PreviousRefEnv); ref != "" {
		return git(ctx, root, "rev-parse", "--verify", ref+"^{commit}")
	}
	shallow, err := git(ctx, root, "rev-parse", "--is-shallow-repository")
	if err != nil {
		return "", err
	}
	if shallow == "true" {
		return "", fmt.Errorf("%s is a shallow clone: the upgrade specs need its history (git fetch --unshallow), or %s=<ref>", root, PreviousRefEnv)
	}
	last, err := git(ctx, root, "log", "-1", "--format=%H", "--", "charts", "manifests")
	if err != nil {
		return "", err
	}
	if last == "" {
		return "", fmt.Errorf("no commit in %s's history changed charts/ or manifests/ (a shallow clone? fetch the whole history)", root)
	}
	return git(ctx, root, "rev-parse", "--verify", last+"^")
}

// extractTree writes the tree of ref into dir, as `git archive` does:
// the previous version's chart, manifests and source.
func extractTree(ctx context.Context, root, ref, dir string) error {
	archive := dir + ".tar"
	if _, err := git(ctx, root, "archive", "--format=tar", "-o", archive, ref); err != nil {
		return err
	}
	defer os.Remove(archive)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("creating %s: %w", dir, err)
	}
	if out, err := exec.CommandContext(ctx, "tar", "-xf", archive, "-C", dir).CombinedOutput(); err != nil {
		return fmt.Errorf("extracting %s: %w\n%s", archive, err, out)
	}
	return nil
}

// previousImage is the previous version's image, built from its own tree
// for this machine's platform and pushed to reg under tag "previous".
func previousImage(ctx context.Context, tree, workDir string, reg *images.Registry) (string, error) {
	spec := images.Confighash()
	repo, _, _ := strings.Cut(spec.Ref, ":")
	spec.Ref = repo + ":previous"
	idx, err := images.BuildIndex(ctx, tree, filepath.Join(workDir, "previous-image"), spec, images.HostPlatforms())
	if err != nil {
		return "", fmt.Errorf("building the previous version's image: %w", err)
	}
	if err := reg.Push(ctx, spec, idx); err != nil {
		return "", err
	}
	return spec.Ref, nil
}

func git(ctx context.Context, dir string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("git %s: %w\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return strings.TrimSpace(string(out)), nil
}
