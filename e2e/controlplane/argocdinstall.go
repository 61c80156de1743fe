//go:build linux

package controlplane

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os/exec"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// ArgoCDNamespace is where the settings objects, the AppProject and the
// Applications live, as in Argo CD's own install.
const ArgoCDNamespace = "argocd"

// argocdPartOf is the label Argo CD's settings manager selects its
// ConfigMaps and Secrets by: without it the controller stops with
// `configmap "argocd-cm" not found` although the ConfigMap exists.
var argocdPartOf = map[string]string{"app.kubernetes.io/part-of": "argocd"}

// argocdObjects are what Argo CD's install puts beside its CRDs and what
// the controller reads at start: the namespace, the settings objects, the
// default AppProject (any repo, any destination, cluster-scoped kinds too),
// and the local cluster registered by a cluster Secret.
//
// The cluster Secret stands in for https://kubernetes.default.svc, which
// out of cluster fails ("KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT
// must be defined"): it names the kubeconfig's API server and credentials,
// and Applications use that URL as destination.server.
func argocdObjects(server string, tls rest.TLSClientConfig) ([]map[string]any, error) {
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return nil, fmt.Errorf("making server.secretkey: %w", err)
	}
	clusterConfig, err := json.Marshal(map[string]any{"tlsClientConfig": map[string]string{
		"caData":   base64.StdEncoding.EncodeToString(tls.CAData),
		"certData": base64.StdEncoding.EncodeToString(tls.CertData),
		"keyData":  base64.StdEncoding.EncodeToString(tls.KeyData),
	}})
	if err != nil {
		return nil, fmt.Errorf("encoding the cluster config: %w", err)
	}
	meta := func(name string, labels map[string]string) map[string]any {
		return map[string]any{"name": name, "namespace": ArgoCDNamespace, "labels": labels}
	}
	return []map[string]any{
		{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ArgoCDNamespace}},
		{"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta("argocd-cm", argocdPartOf)},
		{"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta("argocd-cmd-params-cm", argocdPartOf)},
		{"apiVersion": "v1", "kind": "Secret", "metadata": meta("argocd-secret", argocdPartOf),
			"stringData": map[string]string{"server.secretkey": base64.StdEncoding.EncodeToString(key)}},
		{"apiVersion": "argoproj.io/v1alpha1", "kind": "AppProject", "metadata": meta("default", nil),
			"spec": map[string]any{
				"sourceRepos":              []string{"*"},
				"destinations":             []map[string]string{{"server": "*", "namespace": "*"}},
				"clusterResourceWhitelist": []map[string]string{{"group": "*", "kind": "*"}},
			}},
		{"apiVersion": "v1", "kind": "Secret",
			"metadata":   meta("local-cluster", map[string]string{"argocd.argoproj.io/secret-type": "cluster"}),
			"stringData": map[string]string{"name": "local", "server": server, "config": string(clusterConfig)}},
	}, nil
}

// installArgoCD applies the CRDs and argocdObjects to the cluster of
// kubeconfig and returns the server URL Applications must name.
func installArgoCD(ctx context.Context, a ArgoCD, kubectl, kubeconfig string) (server string, err error) {
	crds, err := a.CRDFiles()
	if err != nil {
		return "", err
	}
	if err := ApplyCRDs(ctx, kubectl, kubeconfig, crds); err != nil {
		return "", err
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return "", fmt.Errorf("loading %s: %w", kubeconfig, err)
	}
	if err := rest.LoadTLSFiles(cfg); err != nil {
		return "", fmt.Errorf("reading the certificates of %s: %w", kubeconfig, err)
	}
	objs, err := argocdObjects(cfg.Host, cfg.TLSClientConfig)
	if err != nil {
		return "", err
	}
	list, err := json.Marshal(map[string]any{"apiVersion": "v1", "kind": "List", "items": objs})
	if err != nil {
		return "", fmt.Errorf("encoding Argo CD's objects: %w", err)
	}
	cmd := exec.CommandContext(ctx, kubectl, "--kubeconfig", kubeconfig, "apply", "--server-side", "--field-manager=confighash-e2e", "-f", "-")
	cmd.Stdin = bytes.NewReader(list)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("kubectl apply of Argo CD's settings: %w\n%s", err, out)
	}
	return cfg.Host, nil
}
