package framework

import (
	"context"
	"path/filepath"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"
)

// ServiceAccountToken is a token of an hour for sa, from the TokenRequest
// API.
func ServiceAccountToken(ctx context.Context, t testing.TB, admin kubernetes.Interface, sa *corev1.ServiceAccount) string {
	t.Helper()
	tr, err := admin.CoreV1().ServiceAccounts(sa.Namespace).CreateToken(ctx, sa.Name, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3600)},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("requesting a token for ServiceAccount %s/%s: %v", sa.Namespace, sa.Name, err)
	}
	return tr.Status.Token
}

// ServiceAccountKubeconfig writes a kubeconfig that authenticates as sa
// (ServiceAccountToken) to the API server at host, whose CA is caData, and
// returns its path.
func ServiceAccountKubeconfig(ctx context.Context, t testing.TB, admin kubernetes.Interface, host string, caData []byte, sa *corev1.ServiceAccount) string {
	t.Helper()
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["c"] = &clientcmdapi.Cluster{Server: host, CertificateAuthorityData: caData}
	cfg.AuthInfos["sa"] = &clientcmdapi.AuthInfo{Token: ServiceAccountToken(ctx, t, admin, sa)}
	cfg.Contexts["c"] = &clientcmdapi.Context{Cluster: "c", AuthInfo: "sa", Namespace: sa.Namespace}
	cfg.CurrentContext = "c"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}
