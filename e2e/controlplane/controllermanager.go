//go:build linux

package controlplane

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// controllers are the kube-controller-manager loops the specs need: workload controllers (the rollouts confighash triggers), namespace
// deletion, garbage collection of ReplicaSets, and ServiceAccounts (which the
// ServiceAccount admission plugin requires before any Pod can be created).
// These are the 1.37 names; the short names of older releases are refused.
func controllers() []string {
	return []string{
		"deployment-controller",
		"replicaset-controller",
		"statefulset-controller",
		"daemonset-controller",
		"job-controller",
		"cronjob-controller",
		"namespace-controller",
		"garbage-collector-controller",
		"serviceaccount-controller",
		"serviceaccount-token-controller",
		// For a node: Services find their pods (the webhook Service), pods
		// get kube-root-ca.crt for their ServiceAccount volume, and the
		// node loses its not-ready taint so that pods are scheduled.
		// Harmless without a node.
		"endpoints-controller",
		"endpointslice-controller",
		"root-ca-certificate-publisher-controller",
		"node-lifecycle-controller",
	}
}

// controllerManagerArgs configures kube-controller-manager against the admin
// kubeconfig. Leader election is off because there is only one instance and
// acquiring the lease would only delay startup. The client rate limit is
// raised from the default 20 QPS, which visibly throttles ReplicaSet creation
// in scale tests.
func controllerManagerArgs(dir string, securePort int, kubeconfig string, files pkiFiles) []string {
	return []string{
		"--kubeconfig=" + kubeconfig,
		"--authentication-kubeconfig=" + kubeconfig,
		"--authorization-kubeconfig=" + kubeconfig,
		"--leader-elect=false",
		"--controllers=" + strings.Join(controllers(), ","),
		"--kube-api-qps=200",
		"--kube-api-burst=400",
		"--bind-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(securePort),
		"--cert-dir=" + filepath.Join(dir, "controller-manager"),
		"--service-account-private-key-file=" + files.ServiceAccountKey,
		"--root-ca-file=" + files.CACert,
	}
}

// controllerManagerWorking reports whether the ServiceAccount controller has
// created the `default` ServiceAccount in namespace `default`: proof that the
// controller-manager is connected, authorized and running its loops, and the
// precondition for creating Pods in that namespace.
func controllerManagerWorking(client kubernetes.Interface) func(context.Context) error {
	return func(ctx context.Context) error {
		if _, err := client.CoreV1().ServiceAccounts("default").Get(ctx, "default", metav1.GetOptions{}); err != nil {
			return fmt.Errorf("getting ServiceAccount default/default: %w", err)
		}
		return nil
	}
}
