package health

import (
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/confighash/confighash/internal/contract"
	"github.com/confighash/confighash/internal/workload"
)

// The objects below are what the API server serves after its defaulting
// and the controllers' status writes, as of Kubernetes 1.37 and Argo
// Rollouts 1.10.

const (
	newStamp = "sha256-hmac:new0000000000000000000000000000000000000000000000000000000000000"
	oldStamp = "sha256-hmac:old0000000000000000000000000000000000000000000000000000000000000"
)

// soakFor is the soak the tests judge with.
const soakFor = 30 * time.Second

// t0 is the time the tests judge at.
func t0() time.Time { return time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC) }

func kindOf(kind string) workload.Kind {
	for _, k := range workload.Kinds() {
		if k.GVK.Kind == kind {
			return k
		}
	}
	panic("no kind " + kind)
}

func cloneSetKind() workload.Kind {
	return workload.CustomKind(schema.GroupVersionKind{Group: "apps.kruise.io", Version: "v1alpha1", Kind: "CloneSet"}, "clonesets", []string{"spec", "template"})
}

func template(stamp string) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}, Annotations: map[string]string{contract.ChecksumAnnotation: stamp}},
		Spec: corev1.PodSpec{
			Containers:    []corev1.Container{{Name: "app", Image: "registry.example/web:1.2.3"}},
			RestartPolicy: corev1.RestartPolicyAlways,
		},
	}
}

func cond(typ, status, reason string) map[string]any {
	return map[string]any{"type": typ, "status": status, "reason": reason, "message": "controller text with a value: s3cr3t", "lastTransitionTime": t0().Format(time.RFC3339)}
}

// deploymentDone is a Deployment of 3 replicas whose controller has rolled
// generation 2 out completely.
func deploymentDone() *appsv1.Deployment {
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop", Generation: 2,
			Annotations: map[string]string{"deployment.kubernetes.io/revision": "2"}},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](3),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: template(newStamp),
			Strategy: appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType, RollingUpdate: &appsv1.RollingUpdateDeployment{
				MaxSurge: ptr.To(intstr.FromInt32(1)), MaxUnavailable: ptr.To(intstr.FromInt32(0))}},
			RevisionHistoryLimit:    ptr.To[int32](10),
			ProgressDeadlineSeconds: ptr.To[int32](600),
		},
		Status: appsv1.DeploymentStatus{
			ObservedGeneration: 2, Replicas: 3, UpdatedReplicas: 3, ReadyReplicas: 3, AvailableReplicas: 3,
			Conditions: []appsv1.DeploymentCondition{
				{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue, Reason: "MinimumReplicasAvailable"},
				{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionTrue, Reason: "NewReplicaSetAvailable"},
			},
		},
	}
}

// deploymentRolling is deploymentDone one surge pod into its rollout.
func deploymentRolling() *appsv1.Deployment {
	d := deploymentDone()
	d.Status = appsv1.DeploymentStatus{
		ObservedGeneration: 2, Replicas: 4, UpdatedReplicas: 1, ReadyReplicas: 3, AvailableReplicas: 3, UnavailableReplicas: 1,
		Conditions: []appsv1.DeploymentCondition{
			{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue, Reason: "MinimumReplicasAvailable"},
			{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionTrue, Reason: "ReplicaSetUpdated"},
		},
	}
	return d
}

func statefulSetDone() *appsv1.StatefulSet {
	return &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: "shop", Generation: 4},
		Spec: appsv1.StatefulSetSpec{
			Replicas:            ptr.To[int32](2),
			Selector:            &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template:            template(newStamp),
			ServiceName:         "db",
			PodManagementPolicy: appsv1.OrderedReadyPodManagement,
			UpdateStrategy: appsv1.StatefulSetUpdateStrategy{Type: appsv1.RollingUpdateStatefulSetStrategyType,
				RollingUpdate: &appsv1.RollingUpdateStatefulSetStrategy{Partition: ptr.To[int32](0)}},
		},
		Status: appsv1.StatefulSetStatus{
			ObservedGeneration: 4, Replicas: 2, ReadyReplicas: 2, CurrentReplicas: 2, UpdatedReplicas: 2, AvailableReplicas: 2,
			CurrentRevision: "db-7c9d", UpdateRevision: "db-7c9d",
		},
	}
}

func daemonSetDone() *appsv1.DaemonSet {
	return &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: "agent", Namespace: "shop", Generation: 5},
		Spec: appsv1.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: template(newStamp),
			UpdateStrategy: appsv1.DaemonSetUpdateStrategy{Type: appsv1.RollingUpdateDaemonSetStrategyType,
				RollingUpdate: &appsv1.RollingUpdateDaemonSet{MaxUnavailable: ptr.To(intstr.FromInt32(1)), MaxSurge: ptr.To(intstr.FromInt32(0))}},
		},
		Status: appsv1.DaemonSetStatus{
			ObservedGeneration: 5, DesiredNumberScheduled: 2, CurrentNumberScheduled: 2, UpdatedNumberScheduled: 2,
			NumberAvailable: 2, NumberReady: 2,
		},
	}
}

func cronJob() *batchv1.CronJob {
	return &batchv1.CronJob{
		ObjectMeta: metav1.ObjectMeta{Name: "report", Namespace: "shop", Generation: 7},
		Spec:       batchv1.CronJobSpec{Schedule: "0 * * * *", JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: template(newStamp)}}},
	}
}

func templateMap(stamp string) map[string]any {
	return map[string]any{
		"metadata": map[string]any{"labels": map[string]any{"app": "web"}, "annotations": map[string]any{contract.ChecksumAnnotation: stamp}},
		"spec":     map[string]any{"containers": []any{map[string]any{"name": "app", "image": "registry.example/web:1.2.3"}}},
	}
}

// argoHealthy is a canary Rollout whose controller has promoted
// generation 3 fully; Argo Rollouts writes observedGeneration as a string.
func argoHealthy() *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "argoproj.io/v1alpha1", "kind": "Rollout",
		"metadata": map[string]any{"name": "web", "namespace": "shop", "generation": int64(3)},
		"spec": map[string]any{
			"replicas": int64(2),
			"selector": map[string]any{"matchLabels": map[string]any{"app": "web"}},
			"template": templateMap(newStamp),
			"strategy": map[string]any{"canary": map[string]any{"steps": []any{map[string]any{"setWeight": int64(50)}}}},
		},
		"status": map[string]any{
			"observedGeneration": "3", "phase": "Healthy", "replicas": int64(2), "updatedReplicas": int64(2),
			"readyReplicas": int64(2), "availableReplicas": int64(2), "stableRS": "6d4f8", "currentPodHash": "6d4f8",
			"currentStepIndex": int64(1), "selector": "app=web",
			"conditions": []any{cond("Available", "True", "AvailableReason"), cond("Healthy", "True", "RolloutHealthy"),
				cond("Progressing", "True", "NewReplicaSetAvailable"), cond("Completed", "True", "RolloutCompleted")},
		},
	}}
}

// cloneSet is an OpenKruise CloneSet (a custom kind) at generation 6
// with the given status (nil: none at all).
func cloneSet(status map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet",
		"metadata": map[string]any{"name": "web", "namespace": "shop", "generation": int64(6)},
		"spec": map[string]any{
			"replicas": int64(2),
			"selector": map[string]any{"matchLabels": map[string]any{"app": "web"}},
			"template": templateMap(newStamp),
		},
	}}
	if status != nil {
		u.Object["status"] = status
	}
	return u
}

// podOpt changes a pod built by pod.
type podOpt func(*corev1.Pod)

// pod is a Running, Ready pod of the given revision whose one container
// started at started and has not restarted.
func pod(name, stamp string, started time.Time, opts ...podOpt) corev1.Pod {
	p := corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "shop", Labels: map[string]string{"app": "web"},
			Annotations: map[string]string{contract.ChecksumAnnotation: stamp}},
		Spec: template(stamp).Spec,
		Status: corev1.PodStatus{
			Phase: corev1.PodRunning,
			Conditions: []corev1.PodCondition{
				{Type: corev1.PodReady, Status: corev1.ConditionTrue},
				{Type: corev1.ContainersReady, Status: corev1.ConditionTrue},
			},
			ContainerStatuses: []corev1.ContainerStatus{{
				Name: "app", Ready: true, Started: ptr.To(true), Image: "registry.example/web:1.2.3",
				State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(started)}},
			}},
		},
	}
	for _, o := range opts {
		o(&p)
	}
	return p
}

func waiting(reason string) podOpt {
	return func(p *corev1.Pod) {
		c := &p.Status.ContainerStatuses[0]
		c.Ready = false
		c.State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: "details quoting a value: s3cr3t"}}
	}
}

// crashedOnce is a container that exited with code, was restarted and
// runs again (the kubelet's first restart comes before any back-off).
func crashedOnce(code int32) podOpt {
	return func(p *corev1.Pod) {
		c := &p.Status.ContainerStatuses[0]
		c.RestartCount = 1
		c.LastTerminationState = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: code, Reason: "Error",
			StartedAt: metav1.NewTime(t0().Add(-3 * time.Second)), FinishedAt: metav1.NewTime(t0().Add(-2 * time.Second))}}
	}
}

// crashedAt is a container that exited with code after starting at
// started, was restarted and runs again.
func crashedAt(code int32, started time.Time) podOpt {
	return func(p *corev1.Pod) {
		c := &p.Status.ContainerStatuses[0]
		c.RestartCount = 1
		c.LastTerminationState = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: code, Reason: "Error",
			StartedAt: metav1.NewTime(started), FinishedAt: metav1.NewTime(started.Add(time.Second))}}
	}
}

// withSidecar adds a sidecar (an init container that restarts always)
// with status s; the pod runs.
func withSidecar(s corev1.ContainerStatus) podOpt {
	return func(p *corev1.Pod) {
		p.Spec.InitContainers = []corev1.Container{{Name: s.Name, Image: "registry.example/proxy:1", RestartPolicy: ptr.To(corev1.ContainerRestartPolicyAlways)}}
		p.Status.InitContainerStatuses = []corev1.ContainerStatus{s}
	}
}

// restamped gives d the hook's rollout record of a re-stamp at since.
func restamped(d *appsv1.Deployment, since time.Time) *appsv1.Deployment {
	d.Annotations[contract.RolloutAnnotation] = contract.Rollout{Since: since,
		Changes: []contract.Change{{Source: "configmap/shared", Content: "0123456789abcdef"}}}.String()
	return d
}

// exitedNow is a container that has just exited with code, not yet
// restarted.
func exitedNow(code int32) podOpt {
	return func(p *corev1.Pod) {
		c := &p.Status.ContainerStatuses[0]
		c.Ready = false
		c.State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: code, Reason: "Error",
			StartedAt: metav1.NewTime(t0().Add(-2 * time.Second)), FinishedAt: metav1.NewTime(t0().Add(-time.Second))}}
	}
}

func withInit(s corev1.ContainerStatus) podOpt {
	return func(p *corev1.Pod) {
		p.Spec.InitContainers = []corev1.Container{{Name: s.Name, Image: "registry.example/init:1"}}
		p.Status.InitContainerStatuses = []corev1.ContainerStatus{s}
		// A sidecar (a running init container) or a completed one lets the
		// pod run; a waiting or failed one holds it in Pending.
		if s.State.Running == nil && (s.State.Terminated == nil || s.State.Terminated.ExitCode != 0) {
			p.Status.Phase = corev1.PodPending
			p.Status.ContainerStatuses[0].State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "PodInitializing"}}
		}
	}
}

func phase(ph corev1.PodPhase, reason string) podOpt {
	return func(p *corev1.Pod) {
		p.Status.Phase = ph
		p.Status.Reason = reason
	}
}

func disruptedBy(reason string) podOpt {
	return func(p *corev1.Pod) {
		p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, Reason: reason})
	}
}

func pending() podOpt {
	return func(p *corev1.Pod) {
		p.Status = corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: "Unschedulable"}}}
	}
}

func deleting() podOpt {
	return func(p *corev1.Pod) {
		ts := metav1.NewTime(t0().Add(-time.Second))
		p.DeletionTimestamp = &ts
	}
}

// soaked is three new-revision pods that have run for twice the soak.
func soaked() []corev1.Pod {
	return []corev1.Pod{
		pod("web-new-a", newStamp, t0().Add(-2*soakFor)),
		pod("web-new-b", newStamp, t0().Add(-2*soakFor)),
		pod("web-new-c", newStamp, t0().Add(-2*soakFor)),
	}
}
