//go:build e2e

package incluster

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/confighash/confighash/e2e/controlplane"
	"github.com/confighash/confighash/e2e/framework"
)

// summary is the part of the kubelet's /stats/summary read here.
type summary struct {
	Pods []struct {
		PodRef struct {
			Name, Namespace string
		} `json:"podRef"`
		Containers []struct {
			Name   string `json:"name"`
			Memory *struct {
				RSSBytes        *uint64 `json:"rssBytes"`
				WorkingSetBytes *uint64 `json:"workingSetBytes"`
			} `json:"memory"`
		} `json:"containers"`
	} `json:"pods"`
}

// TestReportConfighashMemory reads each confighash pod's memory from the
// kubelet's stats (through the API server's node proxy, as metrics-server
// does) and reports it. It fails only if the kubelet reports no figure.
func TestReportConfighashMemory(t *testing.T) {
	raw := kubectl(t, "get", "--raw", "/api/v1/nodes/"+controlplane.NodeName+"/proxy/stats/summary")
	var s summary
	if err := json.Unmarshal([]byte(raw), &s); err != nil {
		t.Fatalf("decoding the kubelet's stats summary: %v", err)
	}
	found := 0
	for _, p := range s.Pods {
		if p.PodRef.Namespace != framework.Namespace || !strings.HasPrefix(p.PodRef.Name, "confighash-") {
			continue
		}
		for _, c := range p.Containers {
			if c.Memory == nil || c.Memory.RSSBytes == nil {
				t.Errorf("kubelet reports no memory for %s/%s", p.PodRef.Name, c.Name)
				continue
			}
			found++
			ws := uint64(0)
			if c.Memory.WorkingSetBytes != nil {
				ws = *c.Memory.WorkingSetBytes
			}
			t.Logf("pod %s: RSS %.1f MiB, working set %.1f MiB", p.PodRef.Name, float64(*c.Memory.RSSBytes)/(1<<20), float64(ws)/(1<<20))
		}
	}
	if found == 0 {
		t.Fatalf("the kubelet's stats name no confighash container:\n%s", raw)
	}
}
