//go:build linux

package controlplane

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

func TestJumpsTo(t *testing.T) {
	rules := `-P INPUT ACCEPT
-N KUBE-FIREWALL
-N KUBE-KUBELET-CANARY
-A INPUT -j KUBE-FIREWALL
-A OUTPUT -m comment --comment "kubelet firewall" -j KUBE-FIREWALL
-A KUBE-FIREWALL ! -s 127.0.0.0/8 -d 127.0.0.0/8 -j DROP
-A FORWARD -j KUBE-FORWARD
`
	for name, tc := range map[string]struct {
		chain string
		want  [][]string
	}{
		"jumps from other chains only": {"KUBE-FIREWALL", [][]string{
			{"INPUT", "-j", "KUBE-FIREWALL"},
			{"OUTPUT", "-m", "comment", "--comment", "kubelet firewall", "-j", "KUBE-FIREWALL"},
		}},
		"a chain nobody jumps to":        {"KUBE-KUBELET-CANARY", nil},
		"a target that is not the chain": {"KUBE-FORWARD-X", nil},
	} {
		t.Run(name, func(t *testing.T) {
			got := jumpsTo(rules, tc.chain)
			if len(got) != len(tc.want) {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
			for i := range got {
				if !slices.Equal(got[i], tc.want[i]) {
					t.Errorf("rule %d: got %q, want %q", i, got[i], tc.want[i])
				}
			}
		})
	}
}

// The CNI and kubelet configurations are generated text: check they parse and
// say what the node relies on.
func TestNodeConfigs(t *testing.T) {
	f := newNodeFiles("/tmp/cluster")
	var cni struct {
		Plugins []struct {
			Type, Bridge string
			IsGateway    bool
			IPAM         struct {
				DataDir string `json:"dataDir"`
			}
		}
	}
	if err := json.Unmarshal([]byte(cniConfig(f)), &cni); err != nil {
		t.Fatalf("CNI config is not JSON: %v", err)
	}
	if len(cni.Plugins) != 2 || cni.Plugins[0].Type != "bridge" || cni.Plugins[0].Bridge != bridgeName || !cni.Plugins[0].IsGateway {
		t.Errorf("CNI config: want a gateway bridge on %s first, got %+v", bridgeName, cni.Plugins)
	}
	if !strings.HasPrefix(cni.Plugins[0].IPAM.DataDir, f.dir) {
		t.Errorf("IPAM state %q is not under the node directory", cni.Plugins[0].IPAM.DataDir)
	}

	var kubelet map[string]any
	if err := yaml.Unmarshal([]byte(kubeletConfig(f, 10250, 10248, "/tmp/cluster/pki/ca.crt", 0)), &kubelet); err != nil {
		t.Fatalf("kubelet config is not YAML: %v", err)
	}
	for key, want := range map[string]any{
		"address": nodeIP, "cgroupDriver": "cgroupfs", "failCgroupV1": false, "cgroupsPerQOS": false,
		"containerRuntimeEndpoint": "unix://" + f.containerdSock,
	} {
		if kubelet[key] != want {
			t.Errorf("kubelet %s = %v, want %v", key, kubelet[key], want)
		}
	}

	if _, set := kubelet["maxPods"]; set {
		t.Error("kubelet maxPods set without Options.MaxPods")
	}
	if err := yaml.Unmarshal([]byte(kubeletConfig(f, 10250, 10248, "/tmp/cluster/pki/ca.crt", 250)), &kubelet); err != nil {
		t.Fatalf("kubelet config is not YAML: %v", err)
	}
	if got, ok := kubelet["maxPods"].(float64); !ok || got != 250 {
		t.Errorf("kubelet maxPods = %v, want 250", kubelet["maxPods"])
	}

	for _, want := range []string{"restrict_oom_score_adj = true", "netns_mounts_under_state_dir = true", `sandbox_image = "img"`, f.containerdSock,
		`config_path = "` + f.registryHosts + `"`} {
		if !strings.Contains(containerdConfig(f, "img"), want) {
			t.Errorf("containerd config lacks %s", want)
		}
	}
}
