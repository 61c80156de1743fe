//go:build linux

package controlplane

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// Argo CD's application controller and repo-server are built on demand
// only, like the Rollouts controller, from the one small main of
// e2e/controlplane/tools/argocd, which runs either by the name it is started
// as. Only the specs of the running controller need them.
const (
	// ArgoCDVersion must match the requirement of the tools module under
	// e2e/controlplane/tools/argocd (and e2e/argocd's, whose build cache
	// it shares).
	ArgoCDVersion = "v3.6.1"
	argocdModule  = "github.com/argoproj/argo-cd/v3"
	// argocdToolchain builds the tools module: Argo CD v3.6 needs Go 1.27.
	argocdToolchain = "go1.27.3"
	// The names the tools module's main answers to.
	argocdControllerName = "argocd-application-controller"
	argocdRepoServerName = "argocd-repo-server"
)

// ArgoCD locates a built Argo CD and its CRDs.
type ArgoCD struct {
	// Binary is the argocd-application-controller executable; started as
	// argocd-repo-server (a symbolic link) it is the repo-server.
	Binary string
	// CRDDir is the manifests/crds directory of the argo-cd module in the
	// module cache (read-only): the CRDs of the very version built.
	CRDDir string
}

func argocdGroup(repoRoot string) binaryGroup {
	return binaryGroup{
		label:    "Argo CD",
		version:  ArgoCDVersion,
		toolsDir: filepath.Join(repoRoot, "e2e", "controlplane", "tools", "argocd"),
		outDir:   filepath.Join(repoRoot, "bin", "argocd-"+ArgoCDVersion),
		estimate: "about 2 minutes on 2 busy cores once e2e/argocd's test build has warmed the Go cache, about 20 from a cold one, plus downloading its modules and Go 1.27 if they are not cached yet",
		env:      []string{"GOTOOLCHAIN=" + argocdToolchain},
		targets:  []buildTarget{{".", argocdControllerName}},
	}
}

// EnsureArgoCD returns the cached Argo CD binary under <repo>/bin, building
// it from the Go module proxy first if it is missing, and reporting that
// build's progress to progress (nil discards it).
func EnsureArgoCD(ctx context.Context, progress io.Writer) (ArgoCD, error) {
	g, bin, err := ensureTool(ctx, progress, argocdGroup)
	if err != nil {
		return ArgoCD{}, err
	}
	a := ArgoCD{Binary: bin}
	dir, err := moduleDir(ctx, g.toolsDir, g.env, argocdModule)
	if err != nil {
		return ArgoCD{}, err
	}
	a.CRDDir = filepath.Join(dir, "manifests", "crds")
	return a, nil
}

// CRDFiles are the CRDs the application controller needs: Application and
// AppProject (ApplicationSets have a controller of their own, not run here).
func (a ArgoCD) CRDFiles() ([]string, error) {
	var files []string
	for _, name := range []string{"application-crd.yaml", "appproject-crd.yaml"} {
		f := filepath.Join(a.CRDDir, name)
		if _, err := os.Stat(f); err != nil {
			return nil, fmt.Errorf("argo-cd CRDs: %w", err)
		}
		files = append(files, f)
	}
	return files, nil
}
