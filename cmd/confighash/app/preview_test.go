package app

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPreviewExitCodes: a bad command line or input exits 2, before any
// cluster is read; a cluster that cannot be reached exits 1.
func TestPreviewExitCodes(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	cm := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: app, namespace: shop}\ndata: {a: preview-unit-value}\n"
	good := write("cm.yaml", cm)
	deploy := write("deploy.yaml", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\n")
	noKubeconfig := filepath.Join(dir, "no-such-kubeconfig")
	for name, c := range map[string]struct {
		args  []string
		stdin string
		want  int
	}{
		"no -f":             {args: nil, want: 2},
		"argument":          {args: []string{"-f", good, "web"}, want: 2},
		"bad output":        {args: []string{"-f", good, "-o", "yaml"}, want: 2},
		"bad wave size":     {args: []string{"-f", good, "--max-wave-size", "-1"}, want: 2},
		"missing file":      {args: []string{"-f", filepath.Join(dir, "nope.yaml")}, want: 2},
		"not a source":      {args: []string{"-f", deploy}, want: 2},
		"two on stdin":      {args: []string{"-f", "-"}, stdin: cm + "---\n" + cm, want: 2},
		"other namespace":   {args: []string{"-f", good, "-n", "other", "--kubeconfig", write("kc", kubeconfigFor("https://127.0.0.1:1"))}, want: 2},
		"cluster not there": {args: []string{"-f", "-", "--kubeconfig", write("kc2", kubeconfigFor("https://127.0.0.1:1"))}, stdin: cm, want: 1},
		"no kubeconfig":     {args: []string{"-f", good, "--kubeconfig", noKubeconfig}, want: 1},
	} {
		t.Run(name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := Preview(t.Context(), c.args, strings.NewReader(c.stdin), &stdout, &stderr)
			if got := exitCodeOf(err); got != c.want {
				t.Errorf("exit %d (%v), want %d", got, err, c.want)
			}
			if err != nil && strings.Contains(err.Error()+stdout.String()+stderr.String(), "preview-unit-value") {
				t.Errorf("a value was printed: %v\n%s%s", err, stdout.String(), stderr.String())
			}
		})
	}
}

func exitCodeOf(err error) int {
	if err == nil {
		return 0
	}
	return ExitCode(err)
}

func kubeconfigFor(server string) string {
	return `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "` + server + `", insecure-skip-tls-verify: true}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
`
}
