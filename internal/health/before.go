package health

import (
	corev1 "k8s.io/api/core/v1"
)

// Before says whether in.Object's current revision (the pods carrying
// in.Stamp, the stamp it has now) was failing before a change reaches it:
// its controller gave up (a progress deadline, a stalled or degraded
// status), or one of those pods is failed, or has a container that cannot
// start or has exited and not restarted. A reader failing before a change
// says nothing of the change: it is neither its canary nor evidence
// against it. A rollout still going, and a past restart of a container
// running now, are not failing: the change is judged on such a reader as
// on any.
//
// needPods is true when the status alone cannot tell (it is not rolled
// out): the caller then lists the revision's pods and asks again with them.
// in.Since and in.Soak are not used.
func Before(in Input) (v Verdict, failing, needPods bool) {
	if in.Object == nil || !in.Kind.Mutable || isCronJob(in.Kind) {
		return Verdict{}, false, false
	}
	u, err := toUnstructured(in.Kind, in.Object)
	if err != nil {
		return Verdict{}, false, false
	}
	k := judgeKind(in.Kind, u)
	switch {
	case k.State == Failed:
		return k, true, false
	case k.State == Succeeded:
		// Rolled out: its status counts every replica available.
		return Verdict{}, false, false
	case in.Pods == nil:
		return Verdict{}, false, true
	}
	for _, p := range newRevision(in.Pods, in.Stamp) {
		if v, bad := failingNow(p); bad {
			return v, true, false
		}
	}
	return Verdict{}, false, false
}

// failingNow reports whether p is failing as it is now: failed, or a
// container (init containers too) waiting for a reason that needs a change
// to start (an image that cannot be pulled, a crash loop), or exited with
// a non-zero code and not started again.
func failingNow(p *corev1.Pod) (Verdict, bool) {
	if disrupted(p) {
		return Verdict{}, false
	}
	if p.Status.Phase == corev1.PodFailed {
		return failed(word(p.Status.Reason, "PodFailed"), "pod %s failed", p.Name), true
	}
	for _, statuses := range [][]corev1.ContainerStatus{p.Status.InitContainerStatuses, p.Status.ContainerStatuses} {
		for _, c := range statuses {
			if w := c.State.Waiting; w != nil && cannotStart(w.Reason) {
				return failed(w.Reason, "pod %s container %s: %s", p.Name, c.Name, w.Reason), true
			}
			if t := c.State.Terminated; t != nil && t.ExitCode != 0 {
				return exited(p.Name, c.Name, t), true
			}
		}
	}
	return Verdict{}, false
}
