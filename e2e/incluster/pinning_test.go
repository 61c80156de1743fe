//go:build e2e

package incluster

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/confighash/confighash/cmd/confighash/app"
	"github.com/confighash/confighash/e2e/controlplane"
	"github.com/confighash/confighash/e2e/framework"
	"github.com/confighash/confighash/e2e/images"
	"github.com/confighash/confighash/internal/contract"
	"github.com/confighash/confighash/internal/pinning"
)

// TestHaltHoldsPinnedContent: two readers of a ConfigMap in a pinning
// namespace (labelled, and binding confighash-pinner as a user does) get a
// value their program refuses. The canary's rollout breaks and halts the
// change; the waiting reader keeps its stamp, and everything that starts
// one of its pods meanwhile reads the old value: a deleted pod's
// replacement, a container killed in place (`kill 1`), a scale-up from 2
// to 3; and, three kubelet sync periods later (the kubelet refreshes
// mounted files in place at each), restarted containers still read it from
// the environment, the mounted file and the subPath file alike. Without
// pinning each of these starts on the refused value and crashes.
func TestHaltHoldsPinnedContent(t *testing.T) {
	ctx := env.SpecContext(t)
	ns := pinningNamespace(t)
	cm := sharedConfig(t, ns, map[string]string{"mode": "good"})
	canary := pinnedReader(ns, "canary", 1)
	canary.Annotations = map[string]string{contract.RolloutOrderAnnotation: "-1"}
	waiting := pinnedReader(ns, "waiting", 2)
	env.Create(t, canary)
	env.Create(t, waiting)
	for _, d := range []*appsv1.Deployment{canary, waiting} {
		if err := env.WaitRollout(ctx, ns, d.Name, 3*time.Minute); err != nil {
			t.Fatal(err)
		}
	}
	rs := env.CurrentReplicaSet(t, ns, waiting.Name)
	stamp := env.StampOf(t, waiting)
	pods := readyPods(t, ns, rs, 2)
	snapshot := pinnedTo(t, pods[0])
	t.Logf("waiting's pods read configmap/%s", snapshot)

	env.Update(t, cm, func() { cm.Data["mode"] = "bad" })
	err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, 2*time.Minute, true, func(context.Context) (bool, error) {
		return annotationOf(t, canary, contract.HaltAnnotation) != "", nil
	})
	if err != nil {
		t.Fatal("the canary's broken rollout did not halt the change")
	}
	t.Logf("canary halted: %s", annotationOf(t, canary, contract.HaltAnnotation))
	if env.StampOf(t, waiting) != stamp {
		t.Fatal("the waiting reader was re-stamped while the change was halted")
	}

	// A deleted pod: the ReplicaSet makes another, which reads the old value.
	if err := env.Client.Delete(ctx, &pods[0]); err != nil {
		t.Fatal(err)
	}
	replaced := waitNewPod(t, ns, rs, pods)
	expectPinnedGood(t, replaced, snapshot)
	t.Logf("deleted pod %s: its replacement %s printed the old value", pods[0].Name, replaced.Name)

	// kill 1 in a running container: the kubelet starts it again, resolving
	// its environment and its subPath file anew.
	restarted := killInit(t, pods[1])
	expectPinnedGood(t, restarted, snapshot)
	t.Logf("kill 1 in %s: its restarted container printed the old value", pods[1].Name)

	// A scale-up from 2 to 3.
	before := readyPods(t, ns, rs, 2)
	env.Update(t, waiting, func() { waiting.Spec.Replicas = ptr.To[int32](3) })
	scaled := waitNewPod(t, ns, rs, before)
	expectPinnedGood(t, scaled, snapshot)
	t.Logf("scale-up to 3: the new pod %s printed the old value", scaled.Name)

	// Three sync periods: the kubelet would have refreshed a mounted file
	// of the live ConfigMap by now. Containers that start now read env,
	// the mounted file and the subPath file as they stand.
	time.Sleep(3*controlplane.KubeletSyncFrequency + time.Second)
	for _, p := range []corev1.Pod{replaced, scaled} {
		expectPinnedGood(t, killInit(t, p), snapshot)
	}
	t.Logf("three kubelet sync periods (%s each) later, restarted containers printed the old value", controlplane.KubeletSyncFrequency)
	if env.StampOf(t, waiting) != stamp || len(env.ReplicaSets(t, ns, waiting.Name)) != 1 {
		t.Error("the waiting reader rolled while the change was halted")
	}
}

// pinningNamespace makes a served namespace that pins: labelled
// confighash.dev/pinning=enabled and binding the ClusterRole
// confighash-pinner to confighash's ServiceAccount, as a user does.
func pinningNamespace(t *testing.T) string {
	t.Helper()
	ns := env.NewNamespace(t, true)
	nsObj := &corev1.Namespace{}
	nsObj.Name = ns
	env.Update(t, nsObj, func() { nsObj.Labels[pinning.NamespaceLabel] = pinning.NamespaceEnabled })
	env.Create(t, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: app.PinnerRole},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: app.PinnerRole},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: framework.Namespace, Name: "confighash"}},
	})
	// The webhook reads the namespace's labels from its cache.
	time.Sleep(2 * time.Second)
	return ns
}

// pinnedReader is a Deployment of the sample app reading key mode of
// ConfigMap shared three ways (env, a mounted file, a subPath file), which
// exits at start on mode=bad; maxSurge 1 and maxUnavailable 0, so that a
// broken rollout keeps its old pod.
func pinnedReader(ns, name string, replicas int32) *appsv1.Deployment {
	spec := corev1.PodSpec{
		TerminationGracePeriodSeconds: ptr.To[int64](2),
		Containers: []corev1.Container{{
			Name: "app", Image: images.SampleApp().Ref, ImagePullPolicy: corev1.PullIfNotPresent,
			Args: []string{"-env", "MODE", "-file", "/config/mode", "-file", "/sub/mode", "-refuse", "MODE=bad"},
			Env: []corev1.EnvVar{{Name: "MODE", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{
				LocalObjectReference: corev1.LocalObjectReference{Name: "shared"}, Key: "mode"}}}},
			VolumeMounts: []corev1.VolumeMount{
				{Name: "config", MountPath: "/config"},
				{Name: "config", MountPath: "/sub/mode", SubPath: "mode"},
			},
		}},
		Volumes: []corev1.Volume{{Name: "config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: "shared"},
			Items:                []corev1.KeyToPath{{Key: "mode", Path: "mode"}}}}}},
	}
	d := deployment(ns, name, replicas, spec)
	d.Spec.Strategy = appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType,
		RollingUpdate: &appsv1.RollingUpdateDeployment{MaxSurge: ptr.To(intstr.FromInt32(1)), MaxUnavailable: ptr.To(intstr.FromInt32(0))}}
	return d
}

// readyPods waits for n Running, Ready pods of ReplicaSet rs, not being
// deleted, and returns them.
func readyPods(t *testing.T, ns, rs string, n int) []corev1.Pod {
	t.Helper()
	var got []corev1.Pod
	err := wait.PollUntilContextTimeout(env.SpecContext(t), 250*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		pods, err := podsOf(ctx, ns, rs)
		got = slices.DeleteFunc(pods, func(p corev1.Pod) bool { return !runningReady(p) })
		return err == nil && len(got) == n, err
	})
	if err != nil {
		t.Fatalf("ReplicaSet %s: %d Running, Ready pods, want %d", rs, len(got), n)
	}
	return got
}

// waitNewPod waits for a Running, Ready pod of rs that is none of known.
func waitNewPod(t *testing.T, ns, rs string, known []corev1.Pod) corev1.Pod {
	t.Helper()
	var found corev1.Pod
	err := wait.PollUntilContextTimeout(env.SpecContext(t), 250*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		pods, err := podsOf(ctx, ns, rs)
		if err != nil {
			return false, err
		}
		for _, p := range pods {
			if slices.ContainsFunc(known, func(k corev1.Pod) bool { return k.UID == p.UID }) {
				continue
			}
			found = p
			// Refused config: the container exits at start; report it
			// rather than wait for a Ready that never lasts.
			for _, s := range p.Status.ContainerStatuses {
				if s.RestartCount > 0 || s.State.Terminated != nil {
					return false, fmt.Errorf("new pod %s: container exited (restarts %d): %s", p.Name, s.RestartCount, lastLog(ctx, ns, p.Name))
				}
			}
			return p.Status.Phase == corev1.PodRunning && ready(p), nil
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("ReplicaSet %s: no new Running, Ready pod: %v", rs, err)
	}
	return found
}

// lastLog is what a pod's container printed last, for failure messages.
func lastLog(ctx context.Context, ns, pod string) string {
	out, err := env.Run(ctx, "", "logs", "-n", ns, pod, "--previous")
	if err != nil {
		out, _ = env.Run(ctx, "", "logs", "-n", ns, pod)
	}
	return strings.TrimSpace(out)
}

// pinnedTo checks a pod was pinned (its pinning annotation) and returns the
// ConfigMap it reads in place of shared: a snapshot of it.
func pinnedTo(t *testing.T, p corev1.Pod) string {
	t.Helper()
	if got := p.Annotations[pinning.PodAnnotation]; got != "true" {
		t.Fatalf("pod %s: %s=%q, want true", p.Name, pinning.PodAnnotation, got)
	}
	var name string
	for _, v := range p.Spec.Volumes {
		if v.Name == "config" && v.ConfigMap != nil {
			name = v.ConfigMap.Name
		}
	}
	env := p.Spec.Containers[0].Env[0].ValueFrom.ConfigMapKeyRef.Name
	if !strings.HasPrefix(name, "shared-pin-") || env != name {
		t.Fatalf("pod %s reads volume %s and env %s, want one snapshot of shared", p.Name, name, env)
	}
	return name
}

// expectPinnedGood checks that pod p reads snapshot and printed the old
// value, good, from its environment, mounted file and subPath file.
func expectPinnedGood(t *testing.T, p corev1.Pod, snapshot string) {
	t.Helper()
	expectPinnedValue(t, p, snapshot, "good")
}

// killInit sends SIGTERM to the first process of pod p's container, as
// `kill 1` in it would (the sample image has no shell), from this host,
// which runs the node; and waits until the kubelet has started the
// container again and it is Ready. It returns the pod as it is then.
func killInit(t *testing.T, p corev1.Pod) corev1.Pod {
	t.Helper()
	ctx := env.SpecContext(t)
	cur := &corev1.Pod{}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(&p), cur); err != nil {
		t.Fatal(err)
	}
	st := cur.Status.ContainerStatuses[0]
	pid, err := initPID(strings.TrimPrefix(st.ContainerID, "containerd://"))
	if err != nil {
		t.Fatalf("pod %s: %v", p.Name, err)
	}
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
		t.Fatalf("kill %d (pod %s): %v", pid, p.Name, err)
	}
	err = wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(&p), cur); err != nil {
			return false, err
		}
		s := cur.Status.ContainerStatuses[0]
		if s.RestartCount > st.RestartCount+1 {
			return false, fmt.Errorf("container restarted %d times: %s", s.RestartCount-st.RestartCount, lastLog(ctx, p.Namespace, p.Name))
		}
		return s.RestartCount == st.RestartCount+1 && s.State.Running != nil && ready(*cur), nil
	})
	if err != nil {
		t.Fatalf("pod %s after kill 1: %v", p.Name, err)
	}
	return *cur
}

// initPID finds the host PID of container id's first process: the process
// in the container's cgroup whose parent is not (containerd's shim starts
// it). The cgroup path of a container ends with its ID.
func initPID(id string) (int, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0, fmt.Errorf("listing processes: %w", err)
	}
	in := map[int]int{} // pid → parent pid, for the container's processes
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cg, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cgroup"))
		if err != nil || !strings.Contains(string(cg), id) {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces, so after the last ")".
		f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
		if len(f) < 2 {
			continue
		}
		ppid, _ := strconv.Atoi(f[1])
		in[pid] = ppid
	}
	for pid, ppid := range in {
		if _, ok := in[ppid]; !ok {
			return pid, nil
		}
	}
	return 0, fmt.Errorf("no process of container %s on this host", id)
}
