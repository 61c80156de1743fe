//go:build linux

package controlplane

import (
	"context"
	"io"
	"path/filepath"
)

// HelmVersion must match the requirement of the tools module under
// e2e/controlplane/tools/helm, and is e2e/deploy's Helm SDK's. The CLI is
// for the spec that runs the README's commands as a user types them; the
// other specs use the SDK. Built on demand, like Argo Rollouts.
const HelmVersion = "v3.22.0"

func helmGroup(repoRoot string) binaryGroup {
	return binaryGroup{
		label:    "Helm",
		version:  HelmVersion,
		toolsDir: filepath.Join(repoRoot, "e2e", "controlplane", "tools", "helm"),
		outDir:   filepath.Join(repoRoot, "bin", "helm-"+HelmVersion),
		estimate: "about 2 minutes on 2 cores with e2e/deploy compiled, more from an empty build cache",
		// What `helm version` prints; Helm's own build sets it the same way.
		ldflags: "-X helm.sh/helm/v3/internal/version.version=" + HelmVersion,
		targets: []buildTarget{{"helm.sh/helm/v3/cmd/helm", "helm"}},
	}
}

// EnsureHelm returns the path of the cached helm binary under <repo>/bin,
// building it from the Go module proxy first if it is missing (progress to
// progress; nil discards it). It shares EnsureBinaries' lock.
func EnsureHelm(ctx context.Context, progress io.Writer) (string, error) {
	_, bin, err := ensureTool(ctx, progress, helmGroup)
	return bin, err
}
