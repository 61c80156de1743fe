// Command argocd is Argo CD's application controller and repo-server in one
// binary, built by the e2e harness on demand (see controlplane.EnsureArgoCD).
// It runs the one its file is named after: argocd-application-controller or
// argocd-repo-server (the harness links the second name to the first). One
// binary, because the two share nearly all their code: a second one would
// double the link time and the 200 MB on disk for nothing.
//
// It lives in its own module so that the main go.mod never requires Argo CD
// and its dependency tree, and because Argo CD v3.6 needs Go 1.27. Its
// replace block is e2e/argocd's: the Kubernetes staging modules at the
// version of the local cluster.
package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	controller "github.com/argoproj/argo-cd/v3/cmd/argocd-application-controller/commands"
	reposerver "github.com/argoproj/argo-cd/v3/cmd/argocd-repo-server/commands"
)

func main() {
	var cmd *cobra.Command
	switch name := filepath.Base(os.Args[0]); name {
	case "argocd-application-controller":
		cmd = controller.NewCommand()
	case "argocd-repo-server":
		cmd = reposerver.NewCommand()
	default:
		fmt.Fprintf(os.Stderr, "%s: run me as argocd-application-controller or argocd-repo-server\n", name)
		os.Exit(2)
	}
	if err := cmd.Execute(); err != nil {
		os.Exit(1)
	}
}
