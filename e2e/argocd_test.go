//go:build e2e

package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/yaml"
)

// ArgoCDDirEnv names the directory where TestArgoCDLiveObjects leaves the
// desired and live Deployments for the Argo CD diff proof (e2e/argocd, a
// module of its own because Argo CD needs Go 1.27). make test sets it.
const argoCDDirEnv = "CONFIGHASH_ARGOCD_DIR"

// TestArgoCDLiveObjects applies the manifest the two ways Argo CD syncs
// (client-side apply, which records last-applied-configuration, and
// server-side apply) and saves what Argo CD would compare: the desired
// Deployment from Git and the live one, right after stamping and after a
// config-triggered rollout.
func TestArgoCDLiveObjects(t *testing.T) {
	dir := os.Getenv(argoCDDirEnv)
	if dir == "" {
		t.Skipf("set %s (make test does) to save objects for the Argo CD diff proof", argoCDDirEnv)
	}
	modes := map[string][]string{
		"client-side-apply": {"apply"},
		"server-side-apply": {"apply", "--server-side", "--field-manager=argocd-controller"},
	}
	for mode, args := range modes {
		t.Run(mode, func(t *testing.T) {
			ns := namespace(t, true)
			out := filepath.Join(dir, mode)
			if err := os.MkdirAll(out, 0o755); err != nil {
				t.Fatal(err)
			}
			kubectl(t, manifest, append(args, "-n", ns, "-f", "-")...)
			save(t, filepath.Join(out, "desired.json"), desiredDeployment(t, ns))
			expectRevision(t, ns, "web", 1)
			save(t, filepath.Join(out, "stamped.json"), kubectl(t, "", "get", "deployment", "web", "-n", ns, "-o", "json"))
			kubectl(t, "", "patch", "configmap", "cfg", "-n", ns, "--type=merge", "-p", `{"data":{"a":"2"}}`)
			expectRevision(t, ns, "web", 2)
			save(t, filepath.Join(out, "rolled.json"), kubectl(t, "", "get", "deployment", "web", "-n", ns, "-o", "json"))
		})
	}
}

// desiredDeployment is the manifest's Deployment as Argo CD renders it for
// the target namespace.
func desiredDeployment(t *testing.T, ns string) string {
	t.Helper()
	docs := strings.Split(manifest, "\n---\n")
	obj := map[string]any{}
	if err := yaml.Unmarshal([]byte(docs[len(docs)-1]), &obj); err != nil {
		t.Fatal(err)
	}
	obj["metadata"].(map[string]any)["namespace"] = ns
	b, err := json.MarshalIndent(obj, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func save(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
