//go:build linux

package controlplane

import (
	"fmt"
	"os"
	"strconv"
	"time"
)

// KubeletSyncFrequency is the node's kubelet syncFrequency (kubeletConfig).
const KubeletSyncFrequency = 10 * time.Second

// kubeletConfig is the KubeletConfiguration for this kind of machine:
//   - cgroupfs and failCgroupV1 false: the host mounts cgroup v1, which the
//     1.37 kubelet refuses by default;
//   - no swap check, no QoS cgroups and no allocatable enforcement: the
//     sandbox this runs in cannot create the cgroup hierarchy those need;
//   - clusterDNS empty: there is no cluster DNS, and clients in pods use the
//     KUBERNETES_SERVICE_HOST/PORT environment, as in-cluster config does;
//   - x509 authentication with the cluster CA and AlwaysAllow: only the API
//     server (with the admin client certificate) calls the kubelet, for
//     `kubectl logs`.
//   - syncFrequency 10s (default 1m): a pod's mounted ConfigMaps and Secrets
//     are refreshed at its periodic sync, and the specs that wait "several
//     sync periods" for a refresh (pinning) wait seconds, not minutes.
//   - maxPods only when asked (Options.MaxPods): the pinning soak runs 200
//     pods, more than the default 110.
func kubeletConfig(f nodeFiles, port, healthzPort int, caFile string, maxPods int) string {
	conf := fmt.Sprintf(`apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: %s
port: %d
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: %d
authentication:
  anonymous:
    enabled: false
  webhook:
    enabled: false
  x509:
    clientCAFile: %s
authorization:
  mode: AlwaysAllow
cgroupDriver: cgroupfs
failCgroupV1: false
failSwapOn: false
cgroupsPerQOS: false
enforceNodeAllocatable: []
localStorageCapacityIsolation: false
containerRuntimeEndpoint: unix://%s
clusterDNS: []
serializeImagePulls: false
registerNode: true
syncFrequency: %s
`, nodeIP, port, healthzPort, strconv.Quote(caFile), f.containerdSock, KubeletSyncFrequency)
	if maxPods > 0 {
		conf += fmt.Sprintf("maxPods: %d\n", maxPods)
	}
	return conf
}

func writeKubeletConfig(f nodeFiles, port, healthzPort int, caFile string, maxPods int) error {
	if err := os.MkdirAll(f.kubeletRoot, 0o755); err != nil {
		return fmt.Errorf("creating %s: %w", f.kubeletRoot, err)
	}
	if err := os.WriteFile(f.kubeletConf, []byte(kubeletConfig(f, port, healthzPort, caFile, maxPods)), 0o644); err != nil {
		return fmt.Errorf("writing %s: %w", f.kubeletConf, err)
	}
	return nil
}

// kubeletArgs registers the node under NodeName with the bridge address as
// its only InternalIP: node names do not resolve here, and the API server is
// told to prefer InternalIP when it calls the kubelet.
func kubeletArgs(f nodeFiles, kubeconfig string) []string {
	return []string{
		"--config=" + f.kubeletConf,
		"--kubeconfig=" + kubeconfig,
		"--hostname-override=" + NodeName,
		"--node-ip=" + nodeIP,
		"--root-dir=" + f.kubeletRoot,
	}
}

// schedulerArgs runs kube-scheduler against the admin kubeconfig. Without it
// pods stay Pending unless they name their node.
func schedulerArgs(kubeconfig string, securePort int) []string {
	return []string{
		"--kubeconfig=" + kubeconfig,
		"--authentication-kubeconfig=" + kubeconfig,
		"--authorization-kubeconfig=" + kubeconfig,
		"--leader-elect=false",
		"--bind-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(securePort),
	}
}

// proxyArgs runs kube-proxy in iptables mode, which gives ClusterIPs to pods
// and to the host: confighash in a pod reaches the API server through the
// `kubernetes` Service. Conntrack limits are left alone (the sandbox may not
// write those sysctls).
func proxyArgs(kubeconfig string, healthzPort, metricsPort int) []string {
	return []string{
		"--kubeconfig=" + kubeconfig,
		"--proxy-mode=iptables",
		"--hostname-override=" + NodeName,
		"--cluster-cidr=" + podCIDR,
		"--healthz-bind-address=127.0.0.1:" + strconv.Itoa(healthzPort),
		"--metrics-bind-address=127.0.0.1:" + strconv.Itoa(metricsPort),
		"--conntrack-max-per-core=0",
	}
}
