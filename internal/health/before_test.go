package health

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
)

func TestBefore(t *testing.T) {
	deadline := func() *appsv1.Deployment {
		d := deploymentRolling()
		d.Status.Conditions = []appsv1.DeploymentCondition{
			{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionFalse, Reason: "ProgressDeadlineExceeded"}}
		return d
	}
	dep := kindOf("Deployment")
	tests := map[string]struct {
		in                Input
		failing, needPods bool
		reason            string
	}{
		"rolled out: no pods needed":  {in: Input{Kind: dep, Object: deploymentDone(), Stamp: newStamp}},
		"rolling, pods not listed":    {in: Input{Kind: dep, Object: deploymentRolling(), Stamp: newStamp}, needPods: true},
		"rolling, pods fine":          {in: Input{Kind: dep, Object: deploymentRolling(), Stamp: newStamp, Pods: []corev1.Pod{pod("a", newStamp, t0())}}},
		"rolling, none listed":        {in: Input{Kind: dep, Object: deploymentRolling(), Stamp: newStamp, Pods: []corev1.Pod{}}},
		"image cannot be pulled":      {in: Input{Kind: dep, Object: deploymentRolling(), Stamp: newStamp, Pods: []corev1.Pod{pod("a", newStamp, t0(), waiting("ErrImagePull"))}}, failing: true, reason: "ErrImagePull"},
		"crash loop":                  {in: Input{Kind: dep, Object: deploymentRolling(), Stamp: newStamp, Pods: []corev1.Pod{pod("a", newStamp, t0(), waiting("CrashLoopBackOff"))}}, failing: true, reason: "CrashLoopBackOff"},
		"exited, not started again":   {in: Input{Kind: dep, Object: deploymentRolling(), Stamp: newStamp, Pods: []corev1.Pod{pod("a", newStamp, t0(), exitedNow(1))}}, failing: true, reason: "NonZeroExit"},
		"restarted once, running now": {in: Input{Kind: dep, Object: deploymentRolling(), Stamp: newStamp, Pods: []corev1.Pod{pod("a", newStamp, t0(), crashedOnce(1))}}},
		"an old revision's pod fails": {in: Input{Kind: dep, Object: deploymentRolling(), Stamp: newStamp, Pods: []corev1.Pod{pod("a", oldStamp, t0(), waiting("ErrImagePull"))}}},
		"progress deadline":           {in: Input{Kind: dep, Object: deadline(), Stamp: newStamp}, failing: true, reason: "ProgressDeadlineExceeded"},
		"evicted":                     {in: Input{Kind: dep, Object: deploymentRolling(), Stamp: newStamp, Pods: []corev1.Pod{pod("a", newStamp, t0(), phase(corev1.PodFailed, "Evicted"), disruptedBy("EvictionByEvictionAPI"))}}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			v, failing, needPods := Before(tc.in)
			if failing != tc.failing || needPods != tc.needPods || v.Reason != tc.reason && tc.failing {
				t.Errorf("Before = %+v, failing %v, needPods %v; want failing %v (%s), needPods %v", v, failing, needPods, tc.failing, tc.reason, tc.needPods)
			}
		})
	}
}
