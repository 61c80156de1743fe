//go:build linux

package controlplane

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"

	"k8s.io/client-go/kubernetes"
)

// serviceCIDR is the Service IP range; its first address (10.0.0.1) is in the
// serving certificate because that is the `kubernetes` Service's ClusterIP.
const serviceCIDR = "10.0.0.0/24"

// serviceAccountIssuer is the conventional in-cluster issuer. Nothing outside
// the cluster validates these tokens, so any stable URL would do.
const serviceAccountIssuer = "https://kubernetes.default.svc.cluster.local"

// apiserverArgs configures kube-apiserver on loopback. Admission plugins are
// deliberately left at their defaults: MutatingAdmissionWebhook, which
// confighash is, must behave exactly as in a real cluster.
func apiserverArgs(dir string, etcdPort, securePort int, files pkiFiles) []string {
	return []string{
		"--etcd-servers=http://127.0.0.1:" + strconv.Itoa(etcdPort),
		"--bind-address=127.0.0.1",
		"--advertise-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(securePort),
		// Without this the API server refuses a loopback advertise address:
		// the default reconciler would publish it as the `kubernetes`
		// Service's endpoint. Nothing here consumes that endpoint.
		"--endpoint-reconciler-type=none",
		"--authorization-mode=RBAC",
		"--service-cluster-ip-range=" + serviceCIDR,
		"--cert-dir=" + filepath.Join(dir, "apiserver"),
		"--tls-cert-file=" + files.ServingCert,
		"--tls-private-key-file=" + files.ServingKey,
		"--client-ca-file=" + files.CACert,
		"--service-account-issuer=" + serviceAccountIssuer,
		"--service-account-key-file=" + files.ServiceAccountPublicKey,
		"--service-account-signing-key-file=" + files.ServiceAccountKey,
	}
}

// apiserverReady reports whether /readyz answers ok, which includes etcd
// connectivity and the bootstrap of RBAC roles and system priority levels
// that the controller-manager and the tests rely on.
func apiserverReady(client kubernetes.Interface) func(context.Context) error {
	return func(ctx context.Context) error {
		body, err := client.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
		if err != nil {
			return fmt.Errorf("GET /readyz: %w (%s)", err, body)
		}
		return nil
	}
}
