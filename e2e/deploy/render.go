// Package deploy renders confighash's deploy manifests: the kustomize
// overlays under manifests/ and the Helm chart under charts/confighash. Its
// tests check that the two agree object by object, that they match what the
// code expects (the webhook configuration, the flags, the names), and, with
// -tags e2e, that a real API server accepts every object.
//
// It is a module of its own so that the Helm SDK and cert-manager stay out of
// the confighash module's dependencies.
package deploy

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/confighash/confighash/e2e/controlplane"
)

// Fixed names of the manifests.
const (
	// Namespace is where the manifests install confighash, and the release
	// namespace the chart is rendered for.
	Namespace = "confighash-system"
	// ReleaseName is the Helm release name used for rendering.
	ReleaseName = "confighash"
)

// CertMode pairs a kustomize overlay with the chart's certMode value that
// must render the same objects.
type CertMode struct {
	Overlay   string // directory under manifests/overlays
	ChartMode string // value of certMode
	Flag      string // --cert-mode the binary gets
}

// CertModes are the supported ways of getting the webhook's certificate.
var CertModes = []CertMode{
	{Overlay: "self-managed", ChartMode: "self", Flag: "self"},
	{Overlay: "cert-manager", ChartMode: "cert-manager", Flag: "external"},
}

// Render is one rendering of the manifests.
type Render struct {
	// Name says what was rendered, e.g. "kustomize/self-managed".
	Name    string
	Mode    CertMode
	Objects []*unstructured.Unstructured
	// Namespaces are the namespaces a namespaced-mode render serves (and
	// holds Roles in); nil for the cluster-wide manifests.
	Namespaces []string
	// PinNamespaces are the namespaces a render with pinning binds the
	// ClusterRole confighash-pinner in; nil without pinning.
	PinNamespaces []string
}

// Paths locates what the renderers need.
type Paths struct {
	Root    string // the confighash repository
	Kubectl string // the kubectl built by e2e/controlplane
}

// Chart is the chart's directory.
func (p Paths) Chart() string { return filepath.Join(p.Root, "charts", "confighash") }

// Overlay is the directory of a kustomize overlay.
func (p Paths) Overlay(name string) string {
	return filepath.Join(p.Root, "manifests", "overlays", name)
}

// FindPaths finds the repository root and the kubectl that e2e/controlplane
// builds into bin/ (its kustomize is the one these manifests are tested
// with). It does not build kubectl: that takes minutes.
func FindPaths() (Paths, error) {
	root, err := controlplane.RepoRoot()
	if err != nil {
		return Paths{}, err
	}
	kubectl := filepath.Join(root, "bin", "kubernetes-"+controlplane.KubernetesVersion, "kubectl")
	if _, err := os.Stat(kubectl); err != nil {
		return Paths{}, fmt.Errorf("kubectl %s not built (run `make controlplane` or `go run ./e2e/cmd/cluster build` in %s first): %w",
			controlplane.KubernetesVersion, root, err)
	}
	return Paths{Root: root, Kubectl: kubectl}, nil
}

// RenderAll renders both overlays with kustomize and the chart in both cert
// modes (with createNamespace, in Namespace).
func RenderAll(ctx context.Context, p Paths) ([]Render, error) {
	var renders []Render
	for _, m := range CertModes {
		objs, err := Kustomize(ctx, p.Kubectl, p.Overlay(m.Overlay))
		if err != nil {
			return nil, err
		}
		renders = append(renders, Render{Name: "kustomize/" + m.Overlay, Mode: m, Objects: objs})
	}
	for _, m := range CertModes {
		objs, err := HelmTemplate(p.Chart(), Namespace, map[string]any{"certMode": m.ChartMode, "createNamespace": true})
		if err != nil {
			return nil, err
		}
		renders = append(renders, Render{Name: "helm/" + m.ChartMode, Mode: m, Objects: objs})
	}
	return renders, nil
}

// Kustomize runs `kubectl kustomize dir`.
func Kustomize(ctx context.Context, kubectl, dir string) ([]*unstructured.Unstructured, error) {
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, kubectl, "kustomize", dir)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("kubectl kustomize %s: %w\n%s", dir, err, stderr.String())
	}
	objs, err := ParseObjects(stdout.Bytes())
	if err != nil {
		return nil, fmt.Errorf("kubectl kustomize %s: %w", dir, err)
	}
	return objs, nil
}

// HelmTemplate renders the chart as `helm template` does, for release
// ReleaseName in namespace, with values over the chart's defaults.
func HelmTemplate(chartDir, namespace string, values map[string]any) ([]*unstructured.Unstructured, error) {
	chrt, err := loader.Load(chartDir)
	if err != nil {
		return nil, fmt.Errorf("loading chart %s: %w", chartDir, err)
	}
	kubeVersion, err := chartutil.ParseKubeVersion(controlplane.KubernetesVersion)
	if err != nil {
		return nil, err
	}
	install := action.NewInstall(&action.Configuration{Log: func(string, ...any) {}})
	install.DryRun = true
	install.ClientOnly = true
	install.Replace = true
	install.ReleaseName = ReleaseName
	install.Namespace = namespace
	install.KubeVersion = kubeVersion
	rel, err := install.Run(chrt, values)
	if err != nil {
		return nil, fmt.Errorf("rendering chart %s with %v: %w", chartDir, values, err)
	}
	objs, err := ParseObjects([]byte(rel.Manifest))
	if err != nil {
		return nil, fmt.Errorf("rendering chart %s with %v: %w", chartDir, values, err)
	}
	return objs, nil
}

// ParseObjects decodes a stream of YAML documents, skipping empty ones.
func ParseObjects(data []byte) ([]*unstructured.Unstructured, error) {
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var objs []*unstructured.Unstructured
	for {
		var m map[string]any
		err := dec.Decode(&m)
		if errors.Is(err, io.EOF) {
			return objs, nil
		}
		if err != nil {
			return nil, fmt.Errorf("decoding YAML document %d: %w", len(objs)+1, err)
		}
		if len(m) == 0 {
			continue
		}
		u := &unstructured.Unstructured{Object: m}
		if u.GetKind() == "" || u.GetAPIVersion() == "" || u.GetName() == "" {
			return nil, fmt.Errorf("YAML document %d lacks apiVersion, kind or name", len(objs)+1)
		}
		objs = append(objs, u)
	}
}

// Key identifies an object: group/kind namespace/name.
func Key(u *unstructured.Unstructured) string {
	gvk := u.GroupVersionKind()
	ns := u.GetNamespace()
	if ns == "" {
		ns = "-"
	}
	return strings.TrimPrefix(gvk.Group+"/", "/") + gvk.Kind + " " + ns + "/" + u.GetName()
}

// Find returns the object of a kind and name, or nil.
func Find(objs []*unstructured.Unstructured, kind, name string) *unstructured.Unstructured {
	for _, u := range objs {
		if u.GetKind() == kind && u.GetName() == name {
			return u
		}
	}
	return nil
}

// ToYAMLStream joins objects into one YAML stream, e.g. for kubectl -f -.
func ToYAMLStream(objs []*unstructured.Unstructured) ([]byte, error) {
	var b bytes.Buffer
	for _, u := range objs {
		data, err := u.MarshalJSON()
		if err != nil {
			return nil, fmt.Errorf("encoding %s: %w", Key(u), err)
		}
		// JSON is YAML; one document per object.
		b.WriteString("---\n")
		b.Write(data)
		b.WriteString("\n")
	}
	return b.Bytes(), nil
}
