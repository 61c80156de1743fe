package health

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/confighash/confighash/internal/contract"
)

// Bounds of what SlimPod keeps of one pod.
const (
	// maxPodContainers bounds the containers (and init containers) kept,
	// with their statuses.
	maxPodContainers = 64
	// podWordBytes bounds a kept reason or stamp; a longer one is cut,
	// which no reason the judge knows is.
	podWordBytes = 256
)

// SlimPod is the part of p that Judge and Owned read: its name, deletion,
// stamp and controller, its containers' names and restart policies, and
// its phase, reason, DisruptionTarget condition and container states
// without their messages. A pod's spec and annotations are its workload's
// to fill, up to the apiserver's size limit; the judge keeps this much of
// each pod instead.
func SlimPod(p *corev1.Pod) corev1.Pod {
	out := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: p.Namespace, UID: p.UID, DeletionTimestamp: p.DeletionTimestamp}}
	if s, ok := p.Annotations[contract.ChecksumAnnotation]; ok {
		out.Annotations = map[string]string{contract.ChecksumAnnotation: cut(s)}
	}
	if c := metav1.GetControllerOfNoCopy(p); c != nil {
		out.OwnerReferences = []metav1.OwnerReference{{APIVersion: c.APIVersion, Kind: c.Kind, Name: c.Name, UID: c.UID, Controller: c.Controller}}
	}
	out.Spec.InitContainers = slimContainers(p.Spec.InitContainers)
	out.Spec.Containers = slimContainers(p.Spec.Containers)
	out.Status.Phase = p.Status.Phase
	out.Status.Reason = cut(p.Status.Reason)
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.DisruptionTarget {
			out.Status.Conditions = []corev1.PodCondition{{Type: c.Type, Status: c.Status}}
			break
		}
	}
	out.Status.InitContainerStatuses = slimStatuses(p.Status.InitContainerStatuses)
	out.Status.ContainerStatuses = slimStatuses(p.Status.ContainerStatuses)
	return out
}

func slimContainers(cs []corev1.Container) []corev1.Container {
	if len(cs) == 0 {
		return nil
	}
	out := make([]corev1.Container, min(len(cs), maxPodContainers))
	for i := range out {
		out[i] = corev1.Container{Name: cs[i].Name, RestartPolicy: cs[i].RestartPolicy}
	}
	return out
}

func slimStatuses(cs []corev1.ContainerStatus) []corev1.ContainerStatus {
	if len(cs) == 0 {
		return nil
	}
	out := make([]corev1.ContainerStatus, min(len(cs), maxPodContainers))
	for i := range out {
		out[i] = corev1.ContainerStatus{Name: cs[i].Name, RestartCount: cs[i].RestartCount,
			State: slimState(cs[i].State), LastTerminationState: slimState(cs[i].LastTerminationState)}
	}
	return out
}

func slimState(s corev1.ContainerState) corev1.ContainerState {
	var out corev1.ContainerState
	if w := s.Waiting; w != nil {
		out.Waiting = &corev1.ContainerStateWaiting{Reason: cut(w.Reason)}
	}
	if r := s.Running; r != nil {
		out.Running = &corev1.ContainerStateRunning{StartedAt: r.StartedAt}
	}
	if t := s.Terminated; t != nil {
		out.Terminated = &corev1.ContainerStateTerminated{ExitCode: t.ExitCode, Reason: cut(t.Reason), StartedAt: t.StartedAt}
	}
	return out
}

func cut(s string) string { return s[:min(len(s), podWordBytes)] }
