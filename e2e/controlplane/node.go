//go:build linux

package controlplane

import (
	"context"
	"fmt"
	"net"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// The node's fixed network. Pods get addresses on a host bridge whose own
// address is also where the API server listens, so that pods (through the
// `kubernetes` Service and kube-proxy) and the host reach it alike, and the
// API server reaches webhook pods directly. Fixed, hence one node per machine.
const (
	// NodeName is the name the local kubelet registers under.
	NodeName = "confighash-node"
	// nodeIP is the bridge's address: the node's InternalIP, the API
	// server's bind address and the pods' gateway.
	nodeIP     = "10.244.0.1"
	podCIDR    = "10.244.0.0/24"
	bridgeName = "cni0"
)

// Startup budgets of the node's processes. The kubelet's first start
// registers the node and waits for the node lifecycle controller to lift the
// not-ready taint, which takes several seconds.
const (
	containerdStartTimeout = time.Minute
	schedulerStartTimeout  = time.Minute
	proxyStartTimeout      = time.Minute
	kubeletStartTimeout    = 3 * time.Minute
)

// nodeFiles are the node's paths under the cluster directory. Everything the
// node writes lives there, so Stop can find and remove it.
type nodeFiles struct {
	dir            string // <Dir>/node
	containerdSock string
	containerdConf string
	cniConfDir     string
	registryHosts  string // containerd's registry config_path
	kubeletRoot    string
	kubeletConf    string
}

func newNodeFiles(clusterDir string) nodeFiles {
	dir := filepath.Join(clusterDir, "node")
	return nodeFiles{
		dir:            dir,
		containerdSock: filepath.Join(dir, "containerd.sock"),
		containerdConf: filepath.Join(dir, "containerd.toml"),
		cniConfDir:     filepath.Join(dir, "cni"),
		registryHosts:  filepath.Join(dir, "registry-hosts"),
		kubeletRoot:    filepath.Join(dir, "kubelet"),
		kubeletConf:    filepath.Join(dir, "kubelet.yaml"),
	}
}

// nodeAddress is where the API server listens when the cluster has a node.
func nodeAddress() net.IP { return net.ParseIP(nodeIP) }

// nodeSchedulable reports whether the node is Ready and has lost the
// not-ready taint, which is when the scheduler starts placing pods on it.
func nodeSchedulable(client kubernetes.Interface) func(context.Context) error {
	return func(ctx context.Context) error {
		n, err := client.CoreV1().Nodes().Get(ctx, NodeName, metav1.GetOptions{})
		if err != nil {
			return fmt.Errorf("getting node %s: %w", NodeName, err)
		}
		ready := false
		for _, c := range n.Status.Conditions {
			if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
				ready = true
			}
		}
		if !ready {
			return fmt.Errorf("node %s is not Ready", NodeName)
		}
		for _, taint := range n.Spec.Taints {
			if taint.Effect == corev1.TaintEffectNoSchedule || taint.Effect == corev1.TaintEffectNoExecute {
				return fmt.Errorf("node %s still has taint %s", NodeName, taint.Key)
			}
		}
		return nil
	}
}
