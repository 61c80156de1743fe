//go:build e2e

package incluster

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/confighash/confighash/e2e/framework"
	"github.com/confighash/confighash/e2e/images"
	"github.com/confighash/confighash/internal/contract"
)

// rolloutHashLabel is the label Argo Rollouts puts on each ReplicaSet it
// makes and on that ReplicaSet's pods: the template hash that
// status.currentPodHash and status.stableRS name.
const rolloutHashLabel = framework.RolloutHashLabel

// canaryReplicas: with setWeight 50 the canary step runs one pod of the
// new template beside one of the stable one.
const canaryReplicas = 2

// modeReader is a pod spec of the sample app printing key mode of
// ConfigMap cm, read both through env and as a mounted file.
func modeReader(cm string) corev1.PodSpec {
	return corev1.PodSpec{
		TerminationGracePeriodSeconds: ptr.To[int64](2),
		Containers: []corev1.Container{{
			Name: "app", Image: images.SampleApp().Ref, ImagePullPolicy: corev1.PullIfNotPresent,
			Args: []string{"-env", "MODE", "-file", "/config/mode"},
			Env: []corev1.EnvVar{{Name: "MODE", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{
				LocalObjectReference: corev1.LocalObjectReference{Name: cm}, Key: "mode"}}}},
			VolumeMounts: []corev1.VolumeMount{{Name: "config", MountPath: "/config"}},
		}},
		Volumes: []corev1.Volume{{Name: "config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: cm},
			Items:                []corev1.KeyToPath{{Key: "mode", Path: "mode"}}}}}},
	}
}

// modeFileReader is a pod spec of the sample app printing key mode of
// ConfigMap cm read only as a mounted file: without the key its pod waits
// for the volume (ContainerCreating) instead of failing.
func modeFileReader(cm string) corev1.PodSpec {
	spec := modeReader(cm)
	spec.Containers[0].Args = []string{"-file", "/config/mode"}
	spec.Containers[0].Env = nil
	return spec
}

// canaryRollout is a canary Rollout of replicas pods of spec, as a manifest
// declares it (no stamp), with the steps setWeight 50 and an indefinite
// pause: a new template runs as a canary until promoted or aborted.
func canaryRollout(ns, name string, replicas int64, spec corev1.PodSpec) *unstructured.Unstructured {
	return framework.CanaryRollout(ns, name, replicas, spec,
		map[string]any{"setWeight": int64(50)}, map[string]any{"pause": map[string]any{}})
}

// rolloutState is what a spec reads of a Rollout's status.
type rolloutState struct {
	Phase, Message string
	// CurrentPodHash is the template hash of the ReplicaSet the Rollout
	// rolls to (the canary while a step holds); StableRS that of the
	// stable one.
	CurrentPodHash, StableRS string
	PauseConditions          int
	Abort                    bool
}

func (s rolloutState) String() string {
	return fmt.Sprintf("phase=%s current=%s stable=%s pauses=%d abort=%t message=%q",
		s.Phase, s.CurrentPodHash, s.StableRS, s.PauseConditions, s.Abort, s.Message)
}

// readRollout reads ro back (into ro) and returns its status.
func readRollout(ctx context.Context, ro *unstructured.Unstructured) (rolloutState, error) {
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(ro), ro); err != nil {
		return rolloutState{}, err
	}
	var s rolloutState
	s.Phase, _, _ = unstructured.NestedString(ro.Object, "status", "phase")
	s.Message, _, _ = unstructured.NestedString(ro.Object, "status", "message")
	s.CurrentPodHash, _, _ = unstructured.NestedString(ro.Object, "status", "currentPodHash")
	s.StableRS, _, _ = unstructured.NestedString(ro.Object, "status", "stableRS")
	s.Abort, _, _ = unstructured.NestedBool(ro.Object, "status", "abort")
	pauses, _, _ := unstructured.NestedSlice(ro.Object, "status", "pauseConditions")
	s.PauseConditions = len(pauses)
	return s, nil
}

// observed reports whether the Rollout's status is for its latest
// generation (Argo Rollouts writes observedGeneration as a string).
func observed(ro *unstructured.Unstructured) bool {
	g, _, _ := unstructured.NestedString(ro.Object, "status", "observedGeneration")
	return g == strconv.FormatInt(ro.GetGeneration(), 10)
}

// waitRollout polls ro every 100 ms until its observed status satisfies
// ok, and returns that status.
func waitRollout(t *testing.T, ro *unstructured.Unstructured, what string, timeout time.Duration, ok func(rolloutState) bool) rolloutState {
	t.Helper()
	var s rolloutState
	err := wait.PollUntilContextTimeout(env.SpecContext(t), 100*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		var err error
		if s, err = readRollout(ctx, ro); err != nil {
			return false, err
		}
		return observed(ro) && ok(s), nil
	})
	if err != nil {
		t.Fatalf("Rollout %s: not %s within %s: %s (%v)", ro.GetName(), what, timeout, s, err)
	}
	return s
}

// waitHealthy waits for a fully promoted, Healthy Rollout.
func waitHealthy(t *testing.T, ro *unstructured.Unstructured) rolloutState {
	t.Helper()
	return waitRollout(t, ro, "Healthy", rolloutWait, func(s rolloutState) bool {
		return s.Phase == "Healthy" && s.StableRS != "" && s.StableRS == s.CurrentPodHash
	})
}

// waitCanaryPaused waits until the Rollout rolls to a template other than
// the stable one stable and holds at the pause step.
func waitCanaryPaused(t *testing.T, ro *unstructured.Unstructured, stable string, timeout time.Duration) rolloutState {
	t.Helper()
	return waitRollout(t, ro, "paused at its canary step", timeout, func(s rolloutState) bool {
		return s.Phase == "Paused" && s.PauseConditions > 0 && s.StableRS == stable && s.CurrentPodHash != stable
	})
}

// patchRollout writes a JSON merge patch to ro, to its status subresource
// when status is true.
func patchRollout(t *testing.T, ro *unstructured.Unstructured, status bool, patch map[string]any) {
	t.Helper()
	raw, err := json.Marshal(patch)
	if err != nil {
		t.Fatal(err)
	}
	p := client.RawPatch(types.MergePatchType, raw)
	target := &unstructured.Unstructured{}
	target.SetGroupVersionKind(framework.RolloutGVK)
	target.SetNamespace(ro.GetNamespace())
	target.SetName(ro.GetName())
	if status {
		err = env.Client.Status().Patch(env.SpecContext(t), target, p)
	} else {
		err = env.Client.Patch(env.SpecContext(t), target, p)
	}
	if err != nil {
		t.Fatalf("patching Rollout %s (status %t) with %s: %v", ro.GetName(), status, raw, err)
	}
}

// promote does what `kubectl argo rollouts promote NAME` (no flags) does to
// a Rollout held at a pause step: it clears status.pauseConditions on the
// status subresource, and unpauses spec.paused if that is set.
func promote(t *testing.T, ro *unstructured.Unstructured) {
	t.Helper()
	s, err := readRollout(env.SpecContext(t), ro)
	if err != nil {
		t.Fatal(err)
	}
	if s.PauseConditions == 0 {
		t.Fatalf("promoting Rollout %s, which is not held at a pause: %s", ro.GetName(), s)
	}
	patchRollout(t, ro, true, map[string]any{"status": map[string]any{"pauseConditions": nil}})
	if paused, _, _ := unstructured.NestedBool(ro.Object, "spec", "paused"); paused {
		patchRollout(t, ro, false, map[string]any{"spec": map[string]any{"paused": false}})
	}
}

// abort does what `kubectl argo rollouts abort NAME` does: it sets
// status.abort on the status subresource.
func abort(t *testing.T, ro *unstructured.Unstructured) {
	t.Helper()
	patchRollout(t, ro, true, map[string]any{"status": map[string]any{"abort": true}})
}

// hashPods lists the pods of Rollout ro's ReplicaSet of template hash
// hash that are not being deleted.
func hashPods(ctx context.Context, ro *unstructured.Unstructured, hash string) ([]corev1.Pod, error) {
	l := &corev1.PodList{}
	if err := env.Client.List(ctx, l, client.InNamespace(ro.GetNamespace()),
		client.MatchingLabels{"app": ro.GetName(), rolloutHashLabel: hash}); err != nil {
		return nil, err
	}
	var out []corev1.Pod
	for _, p := range l.Items {
		if p.DeletionTimestamp == nil {
			out = append(out, p)
		}
	}
	return out, nil
}

// waitPods waits until the ReplicaSet of template hash hash has exactly n
// pods, all Running and Ready, and returns their names.
func waitPods(t *testing.T, ro *unstructured.Unstructured, hash string, n int) []string {
	t.Helper()
	var names []string
	err := wait.PollUntilContextTimeout(env.SpecContext(t), 100*time.Millisecond, rolloutWait, true, func(ctx context.Context) (bool, error) {
		pods, err := hashPods(ctx, ro, hash)
		if err != nil {
			return false, err
		}
		names = names[:0]
		for _, p := range pods {
			if p.Status.Phase == corev1.PodRunning && ready(p) {
				names = append(names, p.Name)
			}
		}
		return len(pods) == n && len(names) == n, nil
	})
	if err != nil {
		t.Fatalf("Rollout %s: want %d Running, Ready pods of %s, have %v", ro.GetName(), n, hash, names)
	}
	slices.Sort(names)
	return names
}

// expectMode checks that each pod printed mode, read through the
// environment and the mounted file alike.
func expectMode(t *testing.T, ns string, pods []string, mode string) {
	t.Helper()
	want := []string{"env:MODE=" + mode, "file:/config/mode=" + mode}
	for _, pod := range pods {
		got := podLog(t, ns, pod, len(want))
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Fatalf("pod %s printed %q, want %q", pod, got, want)
		}
	}
}

// expectFileMode checks that each pod of modeFileReader printed mode.
func expectFileMode(t *testing.T, ro *unstructured.Unstructured, pods []string, mode string) {
	t.Helper()
	for _, pod := range pods {
		if got := podLog(t, ro.GetNamespace(), pod, 1); !slices.Equal(got, []string{"file:/config/mode=" + mode}) {
			t.Fatalf("pod %s printed %q, want file:/config/mode=%s", pod, got, mode)
		}
	}
}

// rolloutPods is every pod of Rollout ro not being deleted, whatever its
// ReplicaSet.
func rolloutPods(t *testing.T, ro *unstructured.Unstructured) []corev1.Pod {
	t.Helper()
	l := &corev1.PodList{}
	if err := env.Client.List(env.SpecContext(t), l, client.InNamespace(ro.GetNamespace()),
		client.MatchingLabels{"app": ro.GetName()}); err != nil {
		t.Fatal(err)
	}
	return slices.DeleteFunc(l.Items, func(p corev1.Pod) bool { return p.DeletionTimestamp != nil })
}

// rolloutReplicaSets lists, sorted, the template hashes of the
// ReplicaSets Rollout ro controls.
func rolloutReplicaSets(t *testing.T, ro *unstructured.Unstructured) []string {
	t.Helper()
	return env.RolloutReplicaSets(t, ro.GetNamespace(), ro.GetName())
}

// waitHalt waits for confighash's halt record on ro and returns it parsed.
func waitHalt(t *testing.T, ro *unstructured.Unstructured, timeout time.Duration) contract.Halt {
	t.Helper()
	var raw string
	err := wait.PollUntilContextTimeout(env.SpecContext(t), 100*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(ro), ro); err != nil {
			return false, err
		}
		raw = ro.GetAnnotations()[contract.HaltAnnotation]
		return raw != "", nil
	})
	if err != nil {
		t.Fatalf("Rollout %s: no %s record within %s", ro.GetName(), contract.HaltAnnotation, timeout)
	}
	h, err := contract.ParseHalt(raw)
	if err != nil {
		t.Fatalf("Rollout %s: %s %q: %v", ro.GetName(), contract.HaltAnnotation, raw, err)
	}
	return h
}

// expectHalted waits for ro's halt of the change to cm, for reason, and for
// the RolloutHalted Events on ro and on cm. It logs how long after since
// (when what happened: the abort, the change) the record came.
func expectHalted(t *testing.T, ro *unstructured.Unstructured, cm *corev1.ConfigMap, reason, what string, since time.Time) {
	t.Helper()
	h := waitHalt(t, ro, rolloutWait)
	t.Logf("%s -> halt record: %s (%s)", what, time.Since(since).Round(100*time.Millisecond), h)
	source := "configmap/" + cm.Name
	if h.Reason != reason || len(h.Changes) != 1 || h.Changes[0].Source != source {
		t.Errorf("halt %s: want reason %s for %s", h, reason, source)
	}
	for _, on := range []client.Object{ro, cm} {
		waitEvent(t, on, contract.ReasonRolloutHalted)
	}
}
