package argocd

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/argoproj/argo-cd/v3/pkg/apis/application/v1alpha1"
	"github.com/argoproj/argo-cd/v3/util/settings"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// documented is what docs/argocd.md tells users to configure, parsed by
// Argo CD's own types and settings code, so the tests prove exactly the text
// users copy.
type documented struct {
	// application is the Application's spec.ignoreDifferences.
	application []v1alpha1.ResourceIgnoreDifferences
	// system is what Argo CD's settings manager reads from the documented
	// argocd-cm: resource overrides keyed by group/kind.
	system map[string]v1alpha1.ResourceOverride
}

var (
	docsOnce sync.Once
	docs     documented
	docsErr  error
)

// fromDocs loads the documented settings once. The argocd-cm is created in
// the cluster, labelled as an Argo CD install labels it, and read back with
// settings.SettingsManager, as the application controller does.
func fromDocs(t *testing.T) documented {
	t.Helper()
	docsOnce.Do(func() { docs, docsErr = loadDocs(context.WithoutCancel(t.Context())) })
	if docsErr != nil {
		t.Fatalf("loading docs/argocd.md: %v", docsErr)
	}
	return docs
}

func loadDocs(ctx context.Context) (documented, error) {
	text, err := readDocs()
	if err != nil {
		return documented{}, err
	}
	app, err := documentedApplication(text)
	if err != nil {
		return documented{}, err
	}
	cmYAML, err := yamlBlockAfter(text, "## System-wide, in `argocd-cm`")
	if err != nil {
		return documented{}, err
	}
	cm := &corev1.ConfigMap{}
	if err := yaml.UnmarshalStrict([]byte(cmYAML), cm); err != nil {
		return documented{}, fmt.Errorf("the argocd-cm snippet: %w", err)
	}
	system, err := the.systemOverrides(ctx, cm)
	if err != nil {
		return documented{}, err
	}
	if len(app.Spec.IgnoreDifferences) == 0 || len(system) == 0 {
		return documented{}, fmt.Errorf("the snippets configure nothing (%d Application entries, %d argocd-cm overrides)", len(app.Spec.IgnoreDifferences), len(system))
	}
	return documented{application: app.Spec.IgnoreDifferences, system: system}, nil
}

// readDocs returns the text of docs/argocd.md.
func readDocs() (string, error) {
	path, err := docsPath()
	if err != nil {
		return "", err
	}
	text, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	return string(text), nil
}

// documentedApplication is the page's Application block, decoded strictly
// into Argo CD's Application type: its spec.ignoreDifferences are what users
// copy. It needs no cluster (the argocd-cm block does).
func documentedApplication(text string) (v1alpha1.Application, error) {
	appYAML, err := yamlBlockAfter(text, "## Per Application")
	if err != nil {
		return v1alpha1.Application{}, err
	}
	app := v1alpha1.Application{}
	if err := yaml.UnmarshalStrict([]byte(appYAML), &app); err != nil {
		return v1alpha1.Application{}, fmt.Errorf("the Application snippet: %w", err)
	}
	return app, nil
}

// docsPath finds docs/argocd.md of this repository: go test runs in this
// package's directory, make runs the test binary from the repository root,
// so walk up to the directory that holds this module.
func docsPath() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "e2e", "argocd", "go.mod")); err == nil {
			return filepath.Join(dir, "docs", "argocd.md"), nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("docs/argocd.md: not inside the confighash repository")
		}
		dir = parent
	}
}

// yamlBlockAfter returns the first ```yaml block after a heading.
func yamlBlockAfter(text, heading string) (string, error) {
	i := strings.Index(text, "\n"+heading+"\n")
	if i < 0 {
		return "", fmt.Errorf("no heading %q", heading)
	}
	rest := text[i:]
	start := strings.Index(rest, "```yaml\n")
	if start < 0 {
		return "", fmt.Errorf("no yaml block after %q", heading)
	}
	rest = rest[start+len("```yaml\n"):]
	end := strings.Index(rest, "\n```")
	if end < 0 {
		return "", fmt.Errorf("unterminated yaml block after %q", heading)
	}
	return rest[:end], nil
}

// systemOverrides stores cm in the cluster and has Argo CD's settings manager
// turn it into resource overrides.
func (c *cluster) systemOverrides(ctx context.Context, cm *corev1.ConfigMap) (map[string]v1alpha1.ResourceOverride, error) {
	ns := cm.Namespace
	if _, err := c.kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, fmt.Errorf("creating namespace %s: %w", ns, err)
	}
	if cm.Labels == nil {
		cm.Labels = map[string]string{}
	}
	// Argo CD only reads ConfigMaps its installation labels so.
	cm.Labels["app.kubernetes.io/part-of"] = "argocd"
	if _, err := c.kube.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, fmt.Errorf("creating %s/%s: %w", ns, cm.Name, err)
	}
	overrides, err := settings.NewSettingsManager(ctx, c.kube, ns).GetResourceOverrides()
	if err != nil {
		return nil, fmt.Errorf("reading resource overrides with Argo CD's settings manager: %w", err)
	}
	return overrides, nil
}
