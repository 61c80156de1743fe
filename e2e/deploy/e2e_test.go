//go:build e2e

package deploy

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// kubectl runs the control plane's kubectl with its admin kubeconfig.
func kubectl(ctx context.Context, t *testing.T, stdin []byte, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	c := controlPlane(t)
	var out, errOut bytes.Buffer
	cmd := exec.CommandContext(ctx, c.Kubectl, append([]string{"--kubeconfig", c.Kubeconfig, "--cache-dir", kubectlCache(t)}, args...)...)
	cmd.Stdin = bytes.NewReader(stdin)
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err = cmd.Run()
	if err != nil {
		err = fmt.Errorf("kubectl %s: %w\n%s", strings.Join(args, " "), err, errOut.String())
	}
	return out.String(), errOut.String(), err
}

var (
	cacheOnce sync.Once
	cacheDir  string
)

// kubectlCache keeps kubectl's discovery cache out of $HOME.
func kubectlCache(t *testing.T) string {
	cacheOnce.Do(func() {
		var err error
		if cacheDir, err = os.MkdirTemp("", "confighash-kubectl-cache-"); err != nil {
			t.Fatal(err)
		}
	})
	return cacheDir
}

var (
	crdsOnce sync.Once
	crdsErr  error
)

// installCertManagerCRDs installs the CRDs shipped in the cert-manager
// module this module requires, so Issuers and Certificates can be applied.
func installCertManagerCRDs(ctx context.Context, t *testing.T) {
	t.Helper()
	crdsOnce.Do(func() {
		var dir string
		if dir, crdsErr = certManagerCRDDir(ctx); crdsErr != nil {
			return
		}
		if _, _, crdsErr = kubectl(ctx, t, nil, "apply", "--server-side", "--field-manager=confighash-deploy-e2e", "-f", dir); crdsErr != nil {
			return
		}
		_, _, crdsErr = kubectl(ctx, t, nil, "wait", "--for=condition=Established", "--timeout=2m", "-f", dir)
	})
	if crdsErr != nil {
		t.Fatal(crdsErr)
	}
}

// certManagerCRDDir is the directory of the CRDs shipped in the
// cert-manager module this module requires.
func certManagerCRDDir(ctx context.Context) (string, error) {
	list := exec.CommandContext(ctx, "go", "list", "-m", "-f", "{{.Dir}}", "github.com/cert-manager/cert-manager")
	list.Env = append(os.Environ(), "GOWORK=off")
	out, err := list.Output()
	if err != nil {
		return "", fmt.Errorf("locating the cert-manager module: %w", err)
	}
	return filepath.Join(strings.TrimSpace(string(out)), "deploy", "crds"), nil
}

// apply server-side applies objects, for real or as a server dry run, and
// checks that kubectl reported every object and printed no warning (the
// namespace enforces the restricted Pod Security Standard, whose violations
// by a pod template show up as warnings).
func apply(ctx context.Context, t *testing.T, objs []*unstructured.Unstructured, dryRun bool) {
	t.Helper()
	if len(objs) == 0 {
		return
	}
	stream, err := ToYAMLStream(objs)
	if err != nil {
		t.Fatal(err)
	}
	args := []string{"apply", "--server-side", "--force-conflicts", "--field-manager=confighash-deploy-e2e", "--validate=strict", "-f", "-"}
	if dryRun {
		args = append(args, "--dry-run=server")
	}
	stdout, stderr, err := kubectl(ctx, t, stream, args...)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(stderr, "Warning:") {
		t.Errorf("kubectl warned:\n%s", stderr)
	}
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	if len(lines) != len(objs) {
		t.Errorf("kubectl reported %d objects, want %d:\n%s", len(lines), len(objs), stdout)
	}
	for _, l := range lines {
		if !strings.Contains(l, "serverside-applied") || (dryRun && !strings.HasSuffix(l, "(server dry run)")) {
			t.Errorf("unexpected kubectl output line %q", l)
		}
	}
}

// splitNamespaces separates the Namespace objects, which a dry run cannot
// stand in for: a dry-run Namespace does not exist for the dry runs of the
// objects in it.
func splitNamespaces(objs []*unstructured.Unstructured) (namespaces, rest []*unstructured.Unstructured) {
	for _, u := range objs {
		if u.GetKind() == "Namespace" && u.GetAPIVersion() == "v1" {
			namespaces = append(namespaces, u)
		} else {
			rest = append(rest, u)
		}
	}
	return namespaces, rest
}

// TestServerSideDryRun has a real API server validate every rendered object
// of both overlays and both chart modes: schemas (including cert-manager's
// CRDs), defaulting, admission and Pod Security.
func TestServerSideDryRun(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	rs, _ := allRenders(t)
	controlPlane(t)
	installCertManagerCRDs(ctx, t)
	for _, r := range rs {
		t.Run(r.Name, func(t *testing.T) {
			namespaces, rest := splitNamespaces(r.Objects)
			if len(namespaces) != 1 {
				t.Errorf("%d Namespaces rendered, want 1", len(namespaces))
			}
			apply(ctx, t, namespaces, false)
			apply(ctx, t, rest, true)
		})
	}
}
