package health

import (
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/confighash/confighash/internal/workload"
)

type judgeCase struct {
	name   string
	kind   workload.Kind
	obj    client.Object
	pods   []corev1.Pod
	stamp  string // newStamp when "", none when "-"
	since  time.Time
	state  State
	reason string
}

// judgeCases are every table of cases.
func judgeCases() []judgeCase {
	return slices.Concat(deploymentCases(), waitingCases(), statefulSetAndDaemonSetCases(), otherKindCases())
}

// templateStamp is the stamp the case's rollout is judged against.
func (c judgeCase) templateStamp() string {
	switch c.stamp {
	case "":
		return newStamp
	case "-":
		return ""
	}
	return c.stamp
}

func deploy(edit func(*appsv1.Deployment)) *appsv1.Deployment {
	d := deploymentDone()
	edit(d)
	return d
}

func sts(edit func(*appsv1.StatefulSet)) *appsv1.StatefulSet {
	s := statefulSetDone()
	edit(s)
	return s
}

func ds(edit func(*appsv1.DaemonSet)) *appsv1.DaemonSet {
	d := daemonSetDone()
	edit(d)
	return d
}

func argo(edit func(map[string]any)) *unstructured.Unstructured {
	u := argoHealthy()
	edit(u.Object)
	return u
}

func statusOf(u *unstructured.Unstructured) map[string]any {
	return u.Object["status"].(map[string]any)
}

func withPods(extra ...corev1.Pod) []corev1.Pod { return append(soaked(), extra...) }

// deploymentCases cover the Deployment rules: the generation, the
// counts, the deadline, the nothing-to-wait-for cases and the soak.
func deploymentCases() []judgeCase {
	D := kindOf("Deployment")
	return []judgeCase{
		{name: "deployment rolled out and soaked", kind: D, obj: deploymentDone(), pods: soaked(), state: Succeeded, reason: "Updated"},
		{name: "deployment status from the previous generation", kind: D,
			obj: deploy(func(d *appsv1.Deployment) { d.Generation = 3 }), pods: soaked(), state: Progressing, reason: "NotObserved"},
		{name: "deployment with no observedGeneration", kind: D,
			obj: deploy(func(d *appsv1.Deployment) { d.Status.ObservedGeneration = 0 }), pods: soaked(), state: Progressing, reason: "NotObserved"},
		{name: "deployment mid-rollout", kind: D, obj: deploymentRolling(),
			pods: []corev1.Pod{pod("web-new-a", newStamp, t0().Add(-time.Minute)), pod("web-old-a", oldStamp, t0().Add(-time.Hour)),
				pod("web-old-b", oldStamp, t0().Add(-time.Hour)), pod("web-old-c", oldStamp, t0().Add(-time.Hour))},
			state: Progressing, reason: "LessUpdated"},
		{name: "deployment past its progress deadline", kind: D, obj: deploy(func(d *appsv1.Deployment) {
			d.Status = deploymentRolling().Status
			d.Status.Conditions[1] = appsv1.DeploymentCondition{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionFalse, Reason: "ProgressDeadlineExceeded"}
		}), state: Failed, reason: "ProgressDeadlineExceeded"},
		{name: "paused deployment, even before the generation is observed", kind: D, obj: deploy(func(d *appsv1.Deployment) {
			d.Spec.Paused = true
			d.Generation = 3
			d.Status.Conditions[1] = appsv1.DeploymentCondition{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionUnknown, Reason: "DeploymentPaused"}
		}), pods: []corev1.Pod{pod("web-old-a", oldStamp, t0().Add(-time.Hour))}, state: Succeeded, reason: "Paused"},
		{name: "deployment with 0 replicas, observed", kind: D, obj: deploy(func(d *appsv1.Deployment) {
			d.Spec.Replicas = ptr.To[int32](0)
			d.Status = appsv1.DeploymentStatus{ObservedGeneration: 2, Conditions: d.Status.Conditions}
		}), state: Succeeded, reason: "NoReplicas"},
		{name: "deployment with 0 replicas, not yet observed", kind: D, obj: deploy(func(d *appsv1.Deployment) {
			d.Spec.Replicas = ptr.To[int32](0)
			d.Generation = 3
		}), state: Progressing, reason: "NotObserved"},
		{name: "deployment whose template does not carry the stamp yet", kind: D,
			obj: deploy(func(d *appsv1.Deployment) { d.Spec.Template = template(oldStamp) }), pods: soaked(), state: Progressing, reason: "NotStamped"},
		{name: "deployment whose cached template lags its crashing new pods", kind: D,
			obj:  deploy(func(d *appsv1.Deployment) { d.Spec.Template = template(oldStamp) }),
			pods: []corev1.Pod{pod("web-new-a", newStamp, t0(), waiting("CrashLoopBackOff"))}, state: Failed, reason: "CrashLoopBackOff"},
		{name: "deployment rolled out, pods not soaked yet", kind: D, obj: deploymentDone(),
			pods: withPods(pod("web-new-d", newStamp, t0().Add(-5*time.Second))), state: Progressing, reason: "Soaking"},
		{name: "deployment rolled out, a new pod restarted after exiting 0", kind: D, obj: deploymentDone(),
			pods: withPods(pod("web-new-d", newStamp, t0().Add(-time.Second), crashedOnce(0))), state: Progressing, reason: "Soaking"},
		{name: "deployment rolled out, a new pod pending", kind: D, obj: deploymentDone(),
			pods: withPods(pod("web-new-d", newStamp, t0(), pending())), state: Progressing, reason: "Soaking"},
		{name: "deployment rolled out, a new pod's phase is Unknown", kind: D, obj: deploymentDone(),
			pods: withPods(pod("web-new-d", newStamp, t0().Add(-2*soakFor), phase(corev1.PodUnknown, "NodeLost"))), state: Progressing, reason: "Soaking"},
		{name: "deployment rolled out, a new pod's sidecar restarted after exiting 0", kind: D, obj: deploymentDone(),
			pods: withPods(pod("web-new-d", newStamp, t0().Add(-2*soakFor), withSidecar(corev1.ContainerStatus{Name: "proxy", RestartCount: 1,
				State:                corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(t0().Add(-time.Second))}},
				LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0, Reason: "Completed"}}}))),
			state: Progressing, reason: "Soaking"},
		{name: "deployment rolled out, a new pod's sidecar not running", kind: D, obj: deploymentDone(),
			pods: withPods(pod("web-new-d", newStamp, t0().Add(-2*soakFor), withSidecar(corev1.ContainerStatus{Name: "proxy",
				State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "PodInitializing"}}}))),
			state: Progressing, reason: "Soaking"},
		{name: "deployment rolled out, a new pod's sidecar soaked", kind: D, obj: deploymentDone(),
			pods: withPods(pod("web-new-d", newStamp, t0().Add(-2*soakFor), withSidecar(corev1.ContainerStatus{Name: "proxy",
				State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(t0().Add(-2 * soakFor))}}}))),
			state: Succeeded, reason: "Updated"},
		// A fix that reverts a halted change brings back the template of
		// pods that outlived the change; the crashes they had with the bad
		// content, before the re-stamp, are not the fix's.
		{name: "a reused pod that crashed before the re-stamp and has run since", kind: D, obj: deploymentDone(), since: t0().Add(-time.Minute),
			pods: withPods(pod("web-new-d", newStamp, t0().Add(-2*soakFor), crashedAt(1, t0().Add(-time.Hour)))), state: Succeeded, reason: "Updated"},
		{name: "a reused pod in back-off after a crash from before the re-stamp", kind: D, obj: deploymentDone(), since: t0().Add(-time.Minute),
			pods:  withPods(pod("web-new-d", newStamp, t0(), crashedAt(1, t0().Add(-2*time.Minute)), waiting("CrashLoopBackOff"))),
			state: Progressing, reason: "Soaking"},
		{name: "a reused pod that crashed after the re-stamp", kind: D, obj: deploymentDone(), since: t0().Add(-time.Minute),
			pods: withPods(pod("web-new-d", newStamp, t0(), crashedAt(2, t0().Add(-30*time.Second)))), state: Failed, reason: "NonZeroExit"},
		{name: "a reused pod that exited, started before the re-stamp", kind: D, obj: deploymentDone(), since: t0().Add(-time.Minute),
			pods: withPods(pod("web-new-d", newStamp, t0(), exitedNow(1), func(p *corev1.Pod) {
				p.Status.ContainerStatuses[0].State.Terminated.StartedAt = metav1.NewTime(t0().Add(-time.Hour))
			})), state: Progressing, reason: "Soaking"},
		{name: "no re-stamp known: every crash is judged", kind: D, obj: deploymentDone(),
			pods: withPods(pod("web-new-d", newStamp, t0().Add(-2*soakFor), crashedAt(1, t0().Add(-time.Hour)))), state: Failed, reason: "NonZeroExit"},
		// The record on the object is anyone's to write: a since far ahead
		// there would make every exit look older than the change. Only
		// Input.Since, the caller's verified time, dates the change.
		{name: "a rollout record dated ahead on the object hides no crash", kind: D, obj: restamped(deploymentDone(), t0().Add(24*time.Hour)),
			since: t0().Add(-time.Minute),
			pods:  withPods(pod("web-new-d", newStamp, t0(), crashedAt(2, t0().Add(-30*time.Second)))), state: Failed, reason: "NonZeroExit"},
		{name: "deployment rolled out, a new pod being deleted does not soak", kind: D, obj: deploymentDone(),
			pods: withPods(pod("web-new-d", newStamp, t0(), pending(), deleting())), state: Succeeded, reason: "Updated"},
		{name: "deployment rolled out, old pods still terminating", kind: D, obj: deploymentDone(),
			pods:  withPods(pod("web-old-a", oldStamp, t0().Add(-time.Hour), deleting()), pod("web-old-b", oldStamp, t0(), exitedNow(143), deleting())),
			state: Succeeded, reason: "Updated"},
		// The measured case: no readiness probe, the program exits
		// at start, the Deployment already counts it available.
		{name: "deployment says complete but a new pod exited and restarted", kind: D, obj: deploymentDone(),
			pods: withPods(pod("web-new-d", newStamp, t0().Add(-time.Second), crashedOnce(1))), state: Failed, reason: "NonZeroExit"},
		{name: "deployment mid-rollout, the new pod has just exited non-zero", kind: D, obj: deploymentRolling(),
			pods:  []corev1.Pod{pod("web-new-a", newStamp, t0(), exitedNow(1)), pod("web-old-a", oldStamp, t0().Add(-time.Hour))},
			state: Failed, reason: "NonZeroExit"},
		{name: "deployment mid-rollout, the new pod was OOM-killed", kind: D, obj: deploymentRolling(),
			pods: []corev1.Pod{pod("web-new-a", newStamp, t0(), exitedNow(137), func(p *corev1.Pod) {
				p.Status.ContainerStatuses[0].State.Terminated.Reason = "OOMKilled"
			})}, state: Failed, reason: "OOMKilled"},
		{name: "a crash-looping pod of the old revision does not count", kind: D, obj: deploymentDone(),
			pods: withPods(pod("web-old-a", oldStamp, t0(), waiting("CrashLoopBackOff"), crashedOnce(1))), state: Succeeded, reason: "Updated"},
		{name: "with no stamp given no pod is of the new revision", kind: D, obj: deploy(func(d *appsv1.Deployment) { d.Spec.Template = template("") }),
			stamp: "-", pods: []corev1.Pod{pod("web-a", "", t0(), waiting("CrashLoopBackOff"))}, state: Succeeded, reason: "Updated"},
		{name: "a new pod that failed", kind: D, obj: deploymentRolling(),
			pods: []corev1.Pod{pod("web-new-a", newStamp, t0(), phase(corev1.PodFailed, ""))}, state: Failed, reason: "PodFailed"},
		{name: "a new pod the cluster evicted is not a failure", kind: D, obj: deploymentDone(),
			pods:  withPods(pod("web-new-d", newStamp, t0(), phase(corev1.PodFailed, "Evicted"), exitedNow(137), disruptedBy("TerminationByKubelet"), deleting())),
			state: Succeeded, reason: "Updated"},
		{name: "a new pod whose init container crash-loops", kind: D, obj: deploymentRolling(),
			pods: []corev1.Pod{pod("web-new-a", newStamp, t0(), withInit(corev1.ContainerStatus{Name: "migrate", RestartCount: 2,
				State:                corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}},
				LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1}}}))},
			state: Failed, reason: "CrashLoopBackOff"},
		{name: "a new pod whose init container exited non-zero", kind: D, obj: deploymentRolling(),
			pods: []corev1.Pod{pod("web-new-a", newStamp, t0(), withInit(corev1.ContainerStatus{Name: "migrate",
				State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 3, Reason: "Error"}}}))},
			state: Failed, reason: "NonZeroExit"},
		{name: "a new pod whose init container succeeded soaks", kind: D, obj: deploymentDone(),
			pods: withPods(pod("web-new-d", newStamp, t0().Add(-2*soakFor), withInit(corev1.ContainerStatus{Name: "migrate",
				State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0, Reason: "Completed"}}}))),
			state: Succeeded, reason: "Updated"},
		{name: "a new pod still creating its container is not a failure", kind: D, obj: deploymentRolling(),
			pods: []corev1.Pod{pod("web-new-a", newStamp, t0(), waiting("ContainerCreating"))}, state: Progressing, reason: "LessUpdated"},
	}
}

// waitingCases: each waiting reason that says a new pod cannot start
// fails the rollout at once, while the Deployment is still mid-rollout.
func waitingCases() []judgeCase {
	var cs []judgeCase
	for _, r := range []string{"CrashLoopBackOff", "ImagePullBackOff", "ErrImagePull", "CreateContainerConfigError",
		"CreateContainerError", "InvalidImageName", "RunContainerError"} {
		cs = append(cs, judgeCase{name: "new pod waiting with " + r, kind: kindOf("Deployment"), obj: deploymentRolling(),
			pods:  []corev1.Pod{pod("web-new-a", newStamp, t0(), waiting(r)), pod("web-old-a", oldStamp, t0().Add(-time.Hour))},
			state: Failed, reason: r})
	}
	return cs
}

func statefulSetAndDaemonSetCases() []judgeCase {
	S, DS := kindOf("StatefulSet"), kindOf("DaemonSet")
	onDelete := func(s *appsv1.StatefulSet) {
		s.Spec.UpdateStrategy = appsv1.StatefulSetUpdateStrategy{Type: appsv1.OnDeleteStatefulSetStrategyType}
		s.Status.UpdateRevision = "db-8e0a" // pods keep their revision until deleted
		s.Status.UpdatedReplicas = 0
	}
	dsOnDelete := func(d *appsv1.DaemonSet) {
		d.Spec.UpdateStrategy = appsv1.DaemonSetUpdateStrategy{Type: appsv1.OnDeleteDaemonSetStrategyType}
		d.Status.UpdatedNumberScheduled = 0
	}
	return []judgeCase{
		{name: "statefulset rolled out and soaked", kind: S, obj: statefulSetDone(), pods: soaked()[:2], state: Succeeded, reason: "Updated"},
		{name: "statefulset not observed", kind: S, obj: sts(func(s *appsv1.StatefulSet) { s.Generation = 5 }), state: Progressing, reason: "NotObserved"},
		{name: "statefulset mid-rollout", kind: S, obj: sts(func(s *appsv1.StatefulSet) {
			s.Status.UpdateRevision, s.Status.UpdatedReplicas, s.Status.CurrentReplicas = "db-8e0a", 1, 1
		}), state: Progressing, reason: "PartitionRollout"},
		{name: "statefulset OnDelete, observed", kind: S, obj: sts(onDelete), pods: []corev1.Pod{pod("db-0", oldStamp, t0().Add(-time.Hour))},
			state: Succeeded, reason: "OnDelete"},
		{name: "statefulset OnDelete, not observed", kind: S, obj: sts(func(s *appsv1.StatefulSet) { onDelete(s); s.Generation = 5 }),
			state: Progressing, reason: "NotObserved"},
		{name: "statefulset with 0 replicas", kind: S, obj: sts(func(s *appsv1.StatefulSet) {
			s.Spec.Replicas = ptr.To[int32](0)
			s.Status = appsv1.StatefulSetStatus{ObservedGeneration: 4, CurrentRevision: "db-7c9d", UpdateRevision: "db-8e0a"}
		}), state: Succeeded, reason: "NoReplicas"},
		{name: "statefulset rolled out, a new pod crash-loops", kind: S, obj: statefulSetDone(),
			pods: []corev1.Pod{pod("db-0", newStamp, t0(), waiting("CrashLoopBackOff"))}, state: Failed, reason: "CrashLoopBackOff"},
		{name: "daemonset rolled out and soaked", kind: DS, obj: daemonSetDone(), pods: soaked()[:2], state: Succeeded, reason: "Updated"},
		{name: "daemonset rolled out on no node", kind: DS, obj: ds(func(d *appsv1.DaemonSet) { d.Status = appsv1.DaemonSetStatus{ObservedGeneration: 5} }),
			state: Succeeded, reason: "Updated"},
		{name: "daemonset not observed", kind: DS, obj: ds(func(d *appsv1.DaemonSet) { d.Generation = 6 }), state: Progressing, reason: "NotObserved"},
		{name: "daemonset mid-rollout", kind: DS, obj: ds(func(d *appsv1.DaemonSet) { d.Status.UpdatedNumberScheduled = 1 }),
			state: Progressing, reason: "LessUpdated"},
		{name: "daemonset OnDelete, observed", kind: DS, obj: ds(dsOnDelete), state: Succeeded, reason: "OnDelete"},
		{name: "daemonset OnDelete, not observed", kind: DS, obj: ds(func(d *appsv1.DaemonSet) { dsOnDelete(d); d.Generation = 6 }),
			state: Progressing, reason: "NotObserved"},
	}
}

func otherKindCases() []judgeCase {
	R, C := kindOf("Rollout"), cloneSetKind()
	return []judgeCase{
		{name: "cronjob", kind: kindOf("CronJob"), obj: cronJob(), pods: []corev1.Pod{pod("report-1-x", newStamp, t0(), waiting("CrashLoopBackOff"))},
			state: Succeeded, reason: "CronJob"},
		{name: "job is never re-stamped", kind: kindOf("Job"), obj: &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "once", Generation: 1}},
			state: Succeeded, reason: "Immutable"},
		{name: "argo rollout healthy and soaked", kind: R, obj: argoHealthy(), pods: soaked()[:2], state: Succeeded, reason: "Updated"},
		{name: "argo rollout healthy, pods soaking", kind: R, obj: argoHealthy(),
			pods: []corev1.Pod{pod("web-new-a", newStamp, t0().Add(-time.Second))}, state: Progressing, reason: "Soaking"},
		{name: "argo rollout healthy for the previous generation", kind: R,
			obj: argo(func(o map[string]any) { o["status"].(map[string]any)["observedGeneration"] = "2" }), state: Progressing, reason: "NotObserved"},
		{name: "argo rollout with an integer observedGeneration", kind: R,
			obj: argo(func(o map[string]any) { o["status"].(map[string]any)["observedGeneration"] = int64(3) }), state: Succeeded, reason: "Updated"},
		{name: "argo rollout degraded past its deadline", kind: R, obj: argo(func(o map[string]any) {
			s := o["status"].(map[string]any)
			s["phase"], s["message"] = "Degraded", `ProgressDeadlineExceeded: ReplicaSet "web-7b9c" has timed out progressing.`
		}), state: Failed, reason: "ProgressDeadlineExceeded"},
		{name: "argo rollout degraded, reason from its conditions", kind: R, obj: argo(func(o map[string]any) {
			s := o["status"].(map[string]any)
			s["phase"], s["message"] = "Degraded", "aborted by a user"
			s["conditions"] = []any{cond("Progressing", "False", "RolloutAborted")}
		}), state: Failed, reason: "RolloutAborted"},
		{name: "argo rollout paused at a step", kind: R, obj: argo(func(o map[string]any) {
			s := o["status"].(map[string]any)
			s["phase"], s["message"] = "Paused", "CanaryPauseStep"
		}), state: Progressing, reason: "Paused"},
		{name: "argo rollout progressing", kind: R, obj: argo(func(o map[string]any) {
			o["status"].(map[string]any)["phase"] = "Progressing"
		}), state: Progressing, reason: "Progressing"},
		{name: "argo rollout, a new pod crash-loops", kind: R, obj: argoHealthy(),
			pods: []corev1.Pod{pod("web-new-a", newStamp, t0(), waiting("CrashLoopBackOff"))}, state: Failed, reason: "CrashLoopBackOff"},
		{name: "custom kind with no status at all", kind: C, obj: cloneSet(nil), state: Succeeded, reason: "NoStatus"},
		{name: "custom kind with an empty status", kind: C, obj: cloneSet(map[string]any{}), state: Succeeded, reason: "NoStatus"},
		{name: "custom kind Ready and soaked", kind: C, obj: cloneSet(readyStatus("True")), pods: soaked()[:2], state: Succeeded, reason: "Updated"},
		{name: "custom kind Ready but no new pod yet", kind: C, obj: cloneSet(readyStatus("True")),
			pods: []corev1.Pod{pod("web-old-a", oldStamp, t0().Add(-time.Hour))}, state: Progressing, reason: "NoNewPods"},
		{name: "custom kind Ready with 0 replicas", kind: C, obj: func() client.Object {
			u := cloneSet(readyStatus("True"))
			u.Object["spec"].(map[string]any)["replicas"] = int64(0)
			return u
		}(), state: Succeeded, reason: "Updated"},
		{name: "custom kind not Ready", kind: C, obj: cloneSet(readyStatus("False")), pods: soaked()[:2], state: Progressing, reason: "Reason"},
		{name: "custom kind Reconciling", kind: C, obj: func() client.Object {
			u := cloneSet(readyStatus("True"))
			statusOf(u)["conditions"] = []any{cond("Reconciling", "True", "Scaling")}
			return u
		}(), state: Progressing, reason: "Scaling"},
		{name: "custom kind Stalled", kind: C, obj: func() client.Object {
			u := cloneSet(readyStatus("True"))
			statusOf(u)["conditions"] = []any{cond("Stalled", "True", "Quota exceeded!")}
			return u
		}(), state: Failed, reason: "Quotaexceeded"},
		{name: "custom kind whose status is from the previous generation", kind: C, obj: func() client.Object {
			u := cloneSet(readyStatus("True"))
			statusOf(u)["observedGeneration"] = int64(5)
			return u
		}(), pods: soaked()[:2], state: Progressing, reason: "LatestGenerationNotObserved"},
		{name: "custom kind whose status kstatus cannot read", kind: C, obj: func() client.Object {
			u := cloneSet(readyStatus("True"))
			statusOf(u)["observedGeneration"] = "s3cr3t"
			return u
		}(), state: Progressing, reason: "StatusUnreadable"},
		{name: "custom kind, a new pod cannot pull its image", kind: C, obj: cloneSet(nil),
			pods: []corev1.Pod{pod("web-new-a", newStamp, t0(), waiting("ImagePullBackOff"))}, state: Failed, reason: "ImagePullBackOff"},
	}
}

// readyStatus is a CloneSet status at generation 6 whose Ready condition
// has status s.
func readyStatus(s string) map[string]any {
	return map[string]any{"observedGeneration": int64(6), "replicas": int64(2), "updatedReplicas": int64(2), "readyReplicas": int64(2),
		"conditions": []any{cond("Ready", s, "Reason")}}
}

func TestJudge(t *testing.T) {
	for _, c := range judgeCases() {
		t.Run(c.name, func(t *testing.T) {
			stamp := c.templateStamp()
			before := c.obj.DeepCopyObject()
			v := Judge(Input{Kind: c.kind, Object: c.obj, Stamp: stamp, Pods: c.pods, Now: t0(), Soak: soakFor, Since: c.since})
			if v.State != c.state || v.Reason != c.reason {
				t.Fatalf("Judge = %s %q (%s), want %s %q", v.State, v.Reason, v.Message, c.state, c.reason)
			}
			if v.Reason == "" || strings.ContainsAny(v.Reason, " \t\n:") {
				t.Errorf("Reason %q is not one word", v.Reason)
			}
			if v.Message == "" || strings.Contains(v.Message, "s3cr3t") {
				t.Errorf("Message %q is empty or quotes a pod's or controller's text", v.Message)
			}
			if !equalObjects(before, c.obj) {
				t.Errorf("Judge changed the object")
			}
		})
	}
}

func TestJudgeWithoutObject(t *testing.T) {
	v := Judge(Input{Kind: kindOf("Deployment"), Stamp: newStamp, Now: t0(), Soak: soakFor})
	if v.State != Progressing || v.Reason != "NoObject" {
		t.Errorf("Judge without an object = %s %q, want progressing NoObject", v.State, v.Reason)
	}
}

func TestStateString(t *testing.T) {
	for s, want := range map[State]string{Progressing: "progressing", Succeeded: "succeeded", Failed: "failed", State(7): "state(7)"} {
		if got := s.String(); got != want {
			t.Errorf("%d.String() = %q, want %q", int(s), got, want)
		}
	}
}

// TestSoakBoundary: a pod soaks exactly when it has run Soak since its
// latest container start, counted from the latest of its containers.
func TestSoakBoundary(t *testing.T) {
	twoContainers := func(first, second time.Time) corev1.Pod {
		p := pod("web-new-a", newStamp, first)
		p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: "sidecar", Image: "registry.example/proxy:1"})
		p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, corev1.ContainerStatus{Name: "sidecar", Ready: true,
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(second)}}})
		return p
	}
	for _, c := range []struct {
		name string
		pod  corev1.Pod
		soak time.Duration
		want State
	}{
		{"just soaked", pod("web-new-a", newStamp, t0().Add(-soakFor)), soakFor, Succeeded},
		{"a second short", pod("web-new-a", newStamp, t0().Add(-soakFor+time.Second)), soakFor, Progressing},
		{"latest container counts", twoContainers(t0().Add(-time.Hour), t0().Add(-time.Second)), soakFor, Progressing},
		{"a container without status", func() corev1.Pod {
			p := twoContainers(t0().Add(-time.Hour), t0().Add(-time.Hour))
			p.Status.ContainerStatuses = p.Status.ContainerStatuses[:1]
			return p
		}(), soakFor, Progressing},
		{"no soak still needs running containers", pod("web-new-a", newStamp, t0(), waiting("ContainerCreating")), 0, Progressing},
		{"no soak", pod("web-new-a", newStamp, t0()), 0, Succeeded},
	} {
		t.Run(c.name, func(t *testing.T) {
			v := Judge(Input{Kind: kindOf("Deployment"), Object: deploymentDone(), Stamp: newStamp, Pods: []corev1.Pod{c.pod}, Now: t0(), Soak: c.soak})
			if v.State != c.want {
				t.Fatalf("Judge = %s %q (%s), want %s", v.State, v.Reason, v.Message, c.want)
			}
		})
	}
}
