//go:build linux

package controlplane

import (
	"fmt"
	"os"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// kubeconfigName is both the cluster, user and context name in the admin
// kubeconfig; a single fixed name keeps `kubectl config` output predictable.
const kubeconfigName = "confighash-e2e"

// adminKubeconfig renders a self-contained kubeconfig (certificates embedded,
// not referenced) for the admin user, so the file keeps working when copied
// or read from another directory.
func adminKubeconfig(host string, p *pki) ([]byte, error) {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[kubeconfigName] = &clientcmdapi.Cluster{
		Server:                   host,
		CertificateAuthorityData: p.CACert,
	}
	cfg.AuthInfos[kubeconfigName] = &clientcmdapi.AuthInfo{
		ClientCertificateData: p.AdminCert,
		ClientKeyData:         p.AdminKey,
	}
	cfg.Contexts[kubeconfigName] = &clientcmdapi.Context{
		Cluster:   kubeconfigName,
		AuthInfo:  kubeconfigName,
		Namespace: "default",
	}
	cfg.CurrentContext = kubeconfigName
	data, err := clientcmd.Write(*cfg)
	if err != nil {
		return nil, fmt.Errorf("encoding kubeconfig: %w", err)
	}
	return data, nil
}

// writeKubeconfig writes the admin kubeconfig with owner-only permissions: it
// holds a system:masters key.
func writeKubeconfig(path string, data []byte) error {
	if err := os.WriteFile(path, data, 0o600); err != nil {
		return fmt.Errorf("writing kubeconfig %s: %w", path, err)
	}
	return nil
}

// adminRESTConfig is the in-memory equivalent of the admin kubeconfig.
// The client-side rate limit is raised well above client-go's default
// (5 QPS) so that tests creating many objects measure the server, not the
// throttle; callers can lower it on their copy.
func adminRESTConfig(host string, p *pki) *rest.Config {
	return &rest.Config{
		Host: host,
		TLSClientConfig: rest.TLSClientConfig{
			CAData:   p.CACert,
			CertData: p.AdminCert,
			KeyData:  p.AdminKey,
		},
		QPS:   200,
		Burst: 400,
	}
}
