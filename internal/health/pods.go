package health

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
// long before the progress deadline. since is when the hook re-stamped the
// workload (zero when unknown): an exit of a container started before it
// ran with the content before the change, so it is no verdict on this one.
// Only a pod that outlived the change can have one: a pod whose template
// came back, as when the fix of a halted change is a revert.
func podFailure(pods []*corev1.Pod, since time.Time) (Verdict, bool) {
	for _, p := range pods {
		if disrupted(p) {
			continue
		}
		if p.Status.Phase == corev1.PodFailed {
			return failed(word(p.Status.Reason, "PodFailed"), "pod %s of the new revision failed", p.Name), true
		}
		for _, statuses := range [][]corev1.ContainerStatus{p.Status.InitContainerStatuses, p.Status.ContainerStatuses} {
			for i := range statuses {
				if v, bad := containerFailure(p.Name, &statuses[i], since); bad {
					return v, true
				}
			}
		}
	}
	return Verdict{}, false
}

func containerFailure(pod string, c *corev1.ContainerStatus, since time.Time) (Verdict, bool) {
	last := c.LastTerminationState.Terminated
	if w := c.State.Waiting; w != nil && cannotStart(w.Reason) {
		// A back-off after an exit from before the change ends in a start
		// with the new content.
		if w.Reason != "CrashLoopBackOff" || last == nil || !startedBefore(last, since) {
			return failed(w.Reason, "pod %s container %s: %s", pod, c.Name, w.Reason), true
		}
	}
	if t := c.State.Terminated; t != nil && t.ExitCode != 0 && !startedBefore(t, since) {
		return exited(pod, c.Name, t), true
	}
	if last != nil && last.ExitCode != 0 && c.RestartCount >= 1 && !startedBefore(last, since) {
		return exited(pod, c.Name, last), true
	}
	return Verdict{}, false
}

// startedBefore reports whether a terminated container had started before
// since (false when its start is unknown, or since is zero).
func startedBefore(t *corev1.ContainerStateTerminated, since time.Time) bool {
	return !t.StartedAt.IsZero() && t.StartedAt.Time.Before(since)
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
// containers and sidecars running for at least d since the latest of
// their starts (a restart is a start, so none restarted meanwhile): a
// program that runs for a moment and then exits counts as available to a
// Deployment without a readiness probe, so the controller can report the
// rollout complete before the crash.
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

// latestStart is the latest start of p's containers and sidecars (init
// containers that restart always), or why p is not soaking yet: one of
// them is not running.
func latestStart(p *corev1.Pod) (time.Time, string) {
	var latest time.Time
	check := func(what string, specs []corev1.Container, statuses []corev1.ContainerStatus, sidecars bool) string {
		for _, spec := range specs {
			if sidecars && (spec.RestartPolicy == nil || *spec.RestartPolicy != corev1.ContainerRestartPolicyAlways) {
				continue
			}
			i := slices.IndexFunc(statuses, func(c corev1.ContainerStatus) bool { return c.Name == spec.Name })
			if i < 0 {
				return what + " " + spec.Name + " has no status yet"
			}
			r := statuses[i].State.Running
			if r == nil || r.StartedAt.IsZero() {
				return what + " " + spec.Name + " is not running"
			}
			if r.StartedAt.After(latest) {
				latest = r.StartedAt.Time
			}
		}
		return ""
	}
	if why := check("sidecar", p.Spec.InitContainers, p.Status.InitContainerStatuses, true); why != "" {
		return time.Time{}, why
	}
	if why := check("container", p.Spec.Containers, p.Status.ContainerStatuses, false); why != "" {
		return time.Time{}, why
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
