//go:build e2e

package incluster

import (
	"testing"
)

// TestReportConfighashMemory reads each confighash pod's resident memory
// from the cgroup the kubelet runs it in and reports it. It fails only if no
// figure can be read.
func TestReportConfighashMemory(t *testing.T) {
	pods := confighashPods(t)
	if len(pods) == 0 {
		t.Fatal("no confighash pods")
	}
	for _, p := range pods {
		for _, c := range p.Status.ContainerStatuses {
			rss, err := env.ControlPlane.ContainerRSS(env.SpecContext(t), c.ContainerID)
			if err != nil {
				t.Errorf("pod %s: %v", p.Name, err)
				continue
			}
			if rss == 0 {
				t.Errorf("pod %s: cgroup reports 0 bytes resident", p.Name)
			}
			t.Logf("pod %s: RSS %.1f MiB (cgroup memory.stat)", p.Name, float64(rss)/(1<<20))
		}
	}
}
