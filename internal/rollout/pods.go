package rollout

import (
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/confighash/confighash/internal/contract"
)

// newRevision picks the pods of the new revision: those whose
// confighash.dev/checksum annotation is the stamp, sorted by name so that
// the verdict names the same pod each time. With no stamp there is no new
// revision to tell (an unstamped pod's empty annotation must not match).
func newRevision(pods []corev1.Pod, stamp string) []*corev1.Pod {
	if stamp == "" {
		return nil
	}
	var out []*corev1.Pod
	for i := range pods {
		if pods[i].Annotations[contract.ChecksumAnnotation] == stamp {
			out = append(out, &pods[i])
		}
	}
	slices.SortFunc(out, func(a, b *corev1.Pod) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// cannotStart reports whether a container's waiting reason says it will
// not start without a change: a crash loop, an image that cannot be pulled,
// a config the runtime refuses.
func cannotStart(reason string) bool {
	switch reason {
	case "CrashLoopBackOff", "ImagePullBackOff", "ErrImagePull", "CreateContainerConfigError",
		"CreateContainerError", "InvalidImageName", "RunContainerError":
		return true
	default:
		return false
	}
}

// disrupted reports whether the pod was evicted, preempted or stopped by a
// node shutdown or taint (the DisruptionTarget condition): a pod ended by
// the cluster, not by its config.
func disrupted(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.DisruptionTarget && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

// podFailure finds the first new-revision pod that failed: its phase is
// Failed, or a container or init container cannot start, or exited with a
// non-zero code (now, or before its latest restart). The exit is what
// catches a program that refuses its config at start within seconds of
// the first crash, before the kubelet's back-off says CrashLoopBackOff and
// long before the progress deadline.
func podFailure(pods []*corev1.Pod) (Verdict, bool) {
	for _, p := range pods {
		if disrupted(p) {
			continue
		}
		if p.Status.Phase == corev1.PodFailed {
			return failed(word(p.Status.Reason, "PodFailed"), "pod %s of the new revision failed", p.Name), true
		}
		for _, statuses := range [][]corev1.ContainerStatus{p.Status.InitContainerStatuses, p.Status.ContainerStatuses} {
			for i := range statuses {
				if v, bad := containerFailure(p.Name, &statuses[i]); bad {
					return v, true
				}
			}
		}
	}
	return Verdict{}, false
}

func containerFailure(pod string, c *corev1.ContainerStatus) (Verdict, bool) {
	if w := c.State.Waiting; w != nil && cannotStart(w.Reason) {
		return failed(w.Reason, "pod %s container %s: %s", pod, c.Name, w.Reason), true
	}
	if t := c.State.Terminated; t != nil && t.ExitCode != 0 {
		return exited(pod, c.Name, t), true
	}
	if t := c.LastTerminationState.Terminated; t != nil && t.ExitCode != 0 && c.RestartCount >= 1 {
		return exited(pod, c.Name, t), true
	}
	return Verdict{}, false
}

func exited(pod, container string, t *corev1.ContainerStateTerminated) Verdict {
	reason := "NonZeroExit"
	if t.Reason == "OOMKilled" {
		reason = t.Reason
	}
	return failed(reason, "pod %s container %s exited with code %d", pod, container, t.ExitCode)
}

// soak turns the kind's Succeeded into Progressing "Soaking" until every
// new-revision pod (but those being deleted) is Running with all its
// containers running, none restarted, for at least d since its latest
// container start: a program that runs for a moment and then exits
// counts as available to a Deployment without a readiness probe, so the
// controller can report the rollout complete before the crash.
func soak(v Verdict, pods []*corev1.Pod, now time.Time, d time.Duration) Verdict {
	for _, p := range pods {
		if p.DeletionTimestamp != nil {
			continue
		}
		if p.Status.Phase != corev1.PodRunning {
			return progressing("Soaking", "pod %s is %s", p.Name, phaseName(p.Status.Phase))
		}
		started, why := latestStart(p)
		if why != "" {
			return progressing("Soaking", "pod %s: %s", p.Name, why)
		}
		if ran := now.Sub(started); ran < d {
			return progressing("Soaking", "pod %s has run %s of its %s soak", p.Name, ran.Round(time.Second), d)
		}
	}
	if len(pods) > 0 {
		v.Message += "; the new pods ran " + d.String() + " without a restart"
	}
	return v
}

// latestStart is the latest start of p's containers, or why p is not
// soaking yet: a container not running, or restarted.
func latestStart(p *corev1.Pod) (time.Time, string) {
	for _, c := range p.Status.InitContainerStatuses {
		if c.RestartCount > 0 {
			return time.Time{}, "init container " + c.Name + " restarted"
		}
	}
	var latest time.Time
	for _, spec := range p.Spec.Containers {
		i := slices.IndexFunc(p.Status.ContainerStatuses, func(c corev1.ContainerStatus) bool { return c.Name == spec.Name })
		if i < 0 {
			return time.Time{}, "container " + spec.Name + " has no status yet"
		}
		c := p.Status.ContainerStatuses[i]
		if c.RestartCount > 0 {
			return time.Time{}, "container " + c.Name + " restarted"
		}
		if c.State.Running == nil || c.State.Running.StartedAt.IsZero() {
			return time.Time{}, "container " + c.Name + " is not running"
		}
		if t := c.State.Running.StartedAt.Time; t.After(latest) {
			latest = t
		}
	}
	if latest.IsZero() {
		return time.Time{}, "no container is running"
	}
	return latest, ""
}

func phaseName(p corev1.PodPhase) string {
	if p == "" {
		return "not yet scheduled"
	}
	return string(p)
}
