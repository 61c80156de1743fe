//go:build e2e

package incluster

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/confighash/confighash/internal/contract"
	"github.com/confighash/confighash/internal/restamp"
)

// rolloutWait bounds each wait for pods to start or a Rollout to move on
// the node; the steps take seconds.
const rolloutWait = 2 * time.Minute

// progressDeadline is the progressDeadlineSeconds of the Rollouts that
// must pass it: short, but well above the few seconds a pod takes to
// start here.
const progressDeadline = 20 * time.Second

// TestRolloutsCanaryOnNode runs the real Argo Rollouts controller (built
// on first use, as for the root suite) against the cluster with a node and
// confighash deployed in it, so canary steps run real pods of the sample
// app and their logs show which config each one read. The CRDs are
// installed while confighash runs: it notices them and watches Rollouts
// without a restart, which the first step waits for.
func TestRolloutsCanaryOnNode(t *testing.T) {
	rolloutsController(t)
	t.Run("promote", testCanaryPromote)
	t.Run("abort", testCanaryAbort)
	t.Run("revert", testCanaryRevert)
	t.Run("wavesWaitForHealthy", testWavesWaitForHealthy)
	t.Run("wavesHaltOnAbort", testWavesHaltOnAbort)
	t.Run("wavesHaltOnDegraded", testWavesHaltOnDegraded)
	t.Run("failingReaderBefore", testFailingReaderBeforeARollout)
	t.Run("pinnedAbort", testPinnedAbort)
}

// rolloutsController starts the Argo Rollouts controller for one spec and
// waits until the hook watches Rollouts.
func rolloutsController(t *testing.T) {
	t.Helper()
	env.StartRollouts(t, env.ControlPlane.Dir)
	waitHookWatchesRollouts(t)
}

// waitHookWatchesRollouts waits until the hook re-stamps a Rollout, so
// that no spec's first change falls in the time before confighash watches
// the new kind (it looks for it every restamp.ProbeInterval).
func waitHookWatchesRollouts(t *testing.T) {
	t.Helper()
	ns := env.NewNamespace(t, true)
	cm := &corev1.ConfigMap{}
	cm.Namespace, cm.Name, cm.Data = ns, "settings", map[string]string{"mode": "one"}
	env.Create(t, cm)
	ro := canaryRollout(ns, "probe", 0, modeReader("settings"))
	env.Create(t, ro)
	before := env.StampOf(t, ro)
	if before == "" {
		t.Fatal("the webhook did not stamp a Rollout at create")
	}
	begin := time.Now()
	env.Update(t, cm, func() { cm.Data["mode"] = "two" })
	err := wait.PollUntilContextTimeout(env.SpecContext(t), 250*time.Millisecond, restamp.ProbeInterval+30*time.Second, true, func(context.Context) (bool, error) {
		return env.StampOf(t, ro) != before, nil
	})
	if err != nil {
		t.Fatal("the hook never re-stamped a Rollout after its CRD was installed")
	}
	t.Logf("the hook watches Rollouts: a change re-stamped one %s later", time.Since(begin).Round(100*time.Millisecond))
}

// healthyCanary creates the canary Rollout ro, whose ConfigMap holds mode
// one, waits until it is Healthy with every pod printing one, and returns
// its stable template hash.
func healthyCanary(t *testing.T, ro *unstructured.Unstructured) string {
	t.Helper()
	env.Create(t, ro)
	s := waitHealthy(t, ro)
	expectMode(t, ro.GetNamespace(), waitPods(t, ro, s.StableRS, canaryReplicas), "one")
	return s.StableRS
}

// canary is a Rollout held at its canary step.
type canary struct {
	// Hash is the canary's template hash.
	Hash string
	// Survivor is the one stable pod the step left running: it has read
	// the old value since before the change.
	Survivor string
	// Took is the time from the change to the canary pod's log.
	Took time.Duration
}

// startCanary changes cm's mode from "one" to "two", as every canary spec
// does, and waits until Rollout ro holds at its pause step with one canary
// pod printing the new mode beside one stable pod still printing the old.
func startCanary(t *testing.T, cm *corev1.ConfigMap, ro *unstructured.Unstructured, stable string) canary {
	const value, old = "two", "one"
	t.Helper()
	before := env.StampOf(t, ro)
	changed := time.Now()
	env.Update(t, cm, func() { cm.Data["mode"] = value })
	s := waitCanaryPaused(t, ro, stable, rolloutWait)
	expectMode(t, ro.GetNamespace(), waitPods(t, ro, s.CurrentPodHash, 1), value)
	took := time.Since(changed)
	if env.StampOf(t, ro) == before {
		t.Fatalf("Rollout %s rolls a canary without a new stamp", ro.GetName())
	}
	survivor := waitPods(t, ro, stable, canaryReplicas-1)
	expectMode(t, ro.GetNamespace(), survivor, old)
	return canary{Hash: s.CurrentPodHash, Survivor: survivor[0], Took: took}
}

// expectAbortedToStable waits, after an abort of canary c, until Rollout ro
// runs only pods of its stable ReplicaSet, and checks what they print: the
// pod that ran through the canary step prints old; the one the abort
// scaled the stable ReplicaSet back up with started after the change and
// read the ConfigMap as it is now, current. An abort returns to the old
// template, not to the old content: reverting the ConfigMap does that (see
// testCanaryRevert).
func expectAbortedToStable(t *testing.T, ro *unstructured.Unstructured, stable string, c canary, old, current string) {
	t.Helper()
	pods := waitPods(t, ro, stable, canaryReplicas)
	if err := wait.PollUntilContextTimeout(env.SpecContext(t), 100*time.Millisecond, rolloutWait, true, func(ctx context.Context) (bool, error) {
		left, err := hashPods(ctx, ro, c.Hash)
		return len(left) == 0, err
	}); err != nil {
		t.Fatal("the canary's pods outlived the abort")
	}
	if !slices.Contains(pods, c.Survivor) {
		t.Fatalf("the stable pod %s that ran through the canary step is gone after the abort: %v", c.Survivor, pods)
	}
	for _, p := range pods {
		if p == c.Survivor {
			expectMode(t, ro.GetNamespace(), []string{p}, old)
		} else {
			expectMode(t, ro.GetNamespace(), []string{p}, current)
		}
	}
}

// settingsRollout makes configmap/settings (mode one) and the canary
// Rollout "web" that reads it, waits until the Rollout is Healthy, and
// returns them with its stable ReplicaSet's pod hash.
func settingsRollout(t *testing.T) (*corev1.ConfigMap, *unstructured.Unstructured, string) {
	t.Helper()
	ns := env.NewNamespace(t, true)
	cm := &corev1.ConfigMap{}
	cm.Namespace, cm.Name, cm.Data = ns, "settings", map[string]string{"mode": "one"}
	env.Create(t, cm)
	ro := canaryRollout(ns, "web", canaryReplicas, modeReader("settings"))
	return cm, ro, healthyCanary(t, ro)
}

// revert sets the ConfigMap's mode back to one and waits until confighash
// has given ro its stamp of then, stamp.
func revert(t *testing.T, cm *corev1.ConfigMap, ro *unstructured.Unstructured, stamp string) {
	t.Helper()
	env.Update(t, cm, func() { cm.Data["mode"] = "one" })
	err := wait.PollUntilContextTimeout(env.SpecContext(t), 100*time.Millisecond, rolloutWait, true, func(context.Context) (bool, error) {
		return env.StampOf(t, ro) == stamp, nil
	})
	if err != nil {
		t.Fatalf("reverting the ConfigMap did not bring the first stamp back to %s", ro.GetName())
	}
}

// testCanaryPromote: a config change starts the canary, whose pod prints
// the new value while the stable pod prints the old; the Rollout holds at
// its pause; promotion completes it, every pod printing the new value,
// with one new ReplicaSet for the change.
func testCanaryPromote(t *testing.T) {
	cm, ro, stable := settingsRollout(t)
	ns := cm.Namespace

	c := startCanary(t, cm, ro, stable)
	canary := c.Hash
	t.Logf("config change -> canary pod printing the new value: %s", c.Took.Round(100*time.Millisecond))
	// It holds there: a pause step without a duration waits for a promote.
	time.Sleep(settle)
	if s, err := readRollout(env.SpecContext(t), ro); err != nil || s.Phase != "Paused" || s.CurrentPodHash != canary {
		t.Fatalf("the canary did not hold at its pause: %s (%v)", s, err)
	}

	promoted := time.Now()
	promote(t, ro)
	s := waitHealthy(t, ro)
	healthy := time.Since(promoted)
	if s.StableRS != canary {
		t.Fatalf("promoted to %s, want the canary %s", s.StableRS, canary)
	}
	pods := waitPods(t, ro, canary, canaryReplicas)
	err := wait.PollUntilContextTimeout(env.SpecContext(t), 100*time.Millisecond, rolloutWait, true, func(context.Context) (bool, error) {
		return len(rolloutPods(t, ro)) == canaryReplicas, nil
	})
	if err != nil {
		t.Fatalf("old pods still running after the promotion: %d pods", len(rolloutPods(t, ro)))
	}
	done := time.Since(promoted)
	expectMode(t, ns, pods, "two")
	if got := rolloutReplicaSets(t, ro); !slices.Equal(got, sortedPair(stable, canary)) {
		t.Errorf("ReplicaSets %v, want the stable and the canary one", got)
	}
	t.Logf("promote -> Healthy: %s; -> only new pods, all printing the new value: %s",
		healthy.Round(100*time.Millisecond), done.Round(100*time.Millisecond))
}

// testCanaryAbort: an abort of the canary returns the Rollout to its
// stable ReplicaSet and scales the canary away; confighash leaves the
// stamp alone (the ConfigMap still holds the new value) and halts the
// change there, until the next change: a revert, which the Rollout takes
// back to its stable ReplicaSet, Healthy.
func testCanaryAbort(t *testing.T) {
	cm, ro, stable := settingsRollout(t)
	stampOne := env.StampOf(t, ro)

	c := startCanary(t, cm, ro, stable)
	t.Logf("config change -> canary pod printing the new value: %s", c.Took.Round(100*time.Millisecond))
	stampTwo := env.StampOf(t, ro)

	aborted := time.Now()
	abort(t, ro)
	s := waitRollout(t, ro, "Degraded by the abort", rolloutWait, func(s rolloutState) bool { return s.Phase == "Degraded" && s.Abort })
	expectAbortedToStable(t, ro, stable, c, "one", "two")
	t.Logf("abort -> only the stable ReplicaSet's pods: %s (%s)", time.Since(aborted).Round(100*time.Millisecond), s)
	if h := waitHalt(t, ro, rolloutWait); h.Reason != "RolloutAborted" {
		t.Errorf("halt %s: want reason RolloutAborted", h)
	}
	time.Sleep(settle)
	if got := env.StampOf(t, ro); got != stampTwo {
		t.Fatal("confighash changed the stamp of the aborted Rollout")
	}
	if got := rolloutReplicaSets(t, ro); !slices.Equal(got, sortedPair(stable, c.Hash)) {
		t.Errorf("ReplicaSets after the abort %v, want the stable and the canary one", got)
	}

	// The fix is the next change: here a revert. The Rollout goes to it
	// (the halted reader included), back to the stable template, which
	// Argo Rollouts takes as a rollback to its stable ReplicaSet: Healthy,
	// not still Degraded by the abort, and the halt is lifted.
	reverted := time.Now()
	revert(t, cm, ro, stampOne)
	if s := waitHealthy(t, ro); s.StableRS != stable {
		t.Fatalf("after the revert the Rollout is Healthy on %s, want its stable %s", s.StableRS, stable)
	}
	err := wait.PollUntilContextTimeout(env.SpecContext(t), 100*time.Millisecond, rolloutWait, true, func(ctx context.Context) (bool, error) {
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(ro), ro); err != nil {
			return false, err
		}
		_, halted := ro.GetAnnotations()[contract.HaltAnnotation]
		return !halted, nil
	})
	if err != nil {
		t.Fatalf("the halt outlived its fix: %s", ro.GetAnnotations()[contract.HaltAnnotation])
	}
	t.Logf("revert after the abort -> Healthy on the stable ReplicaSet, halt lifted: %s", time.Since(reverted).Round(100*time.Millisecond))
	// Nothing rolls: the template is the stable ReplicaSet's. So the pod
	// the abort started while the ConfigMap held two still prints two (a
	// restart of the Rollout replaces it); revert before aborting, or
	// instead of it (testCanaryRevert), and no pod is left so.
	expectAbortedToStable(t, ro, stable, c, "one", "two")
	if got := rolloutReplicaSets(t, ro); !slices.Equal(got, sortedPair(stable, c.Hash)) {
		t.Errorf("ReplicaSets after the revert %v, want the same two", got)
	}
}

// testCanaryRevert: reverting the ConfigMap while the canary holds is the
// way back to the old content: confighash re-stamps the Rollout with the
// stable template's stamp, Argo Rollouts goes back to the stable
// ReplicaSet at once, without a third, and every pod prints the old value,
// the one it scales back up with included.
func testCanaryRevert(t *testing.T) {
	cm, ro, stable := settingsRollout(t)
	ns := cm.Namespace
	stampOne := env.StampOf(t, ro)

	c := startCanary(t, cm, ro, stable)
	t.Logf("config change -> canary pod printing the new value: %s", c.Took.Round(100*time.Millisecond))

	reverted := time.Now()
	revert(t, cm, ro, stampOne)
	s := waitHealthy(t, ro)
	if s.StableRS != stable {
		t.Fatalf("after the revert the Rollout is Healthy on %s, want its stable %s", s.StableRS, stable)
	}
	pods := waitPods(t, ro, stable, canaryReplicas)
	if err := wait.PollUntilContextTimeout(env.SpecContext(t), 100*time.Millisecond, rolloutWait, true, func(context.Context) (bool, error) {
		return len(rolloutPods(t, ro)) == canaryReplicas, nil
	}); err != nil {
		t.Fatal("the canary's pods outlived the revert")
	}
	took := time.Since(reverted)
	expectMode(t, ns, pods, "one")
	if got := rolloutReplicaSets(t, ro); !slices.Equal(got, sortedPair(stable, c.Hash)) {
		t.Errorf("ReplicaSets after the revert %v, want the same two", got)
	}
	t.Logf("revert -> only the stable ReplicaSet's pods, all printing the old value: %s", took.Round(100*time.Millisecond))
}

// twoReaders creates ConfigMap shared (mode one) and two canary Rollouts
// reading it, Healthy: first has rollout-order -1, so it is the change's
// canary although second's name sorts first.
func twoReaders(t *testing.T) (cm *corev1.ConfigMap, first, second *unstructured.Unstructured, firstStable, secondStable string) {
	t.Helper()
	ns := env.NewNamespace(t, true)
	cm = sharedConfig(t, ns, map[string]string{"mode": "one"})
	first = canaryRollout(ns, "web-z", canaryReplicas, modeReader("shared"))
	first.SetAnnotations(map[string]string{contract.RolloutOrderAnnotation: "-1"})
	second = canaryRollout(ns, "web-a", canaryReplicas, modeReader("shared"))
	return cm, first, second, healthyCanary(t, first), healthyCanary(t, second)
}

// holdsStamp checks that ro keeps stamp for d, polling every second.
func holdsStamp(t *testing.T, ro *unstructured.Unstructured, stamp string, d time.Duration) {
	t.Helper()
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(time.Second) {
		if env.StampOf(t, ro) != stamp {
			t.Fatalf("Rollout %s was re-stamped while the change's canary had not rolled out", ro.GetName())
		}
	}
}

// testWavesWaitForHealthy: the second reader of a change is re-stamped
// only once the first, its canary, is Healthy: not while the first holds
// at its pause step, however long, and soon after its promotion.
func testWavesWaitForHealthy(t *testing.T) {
	cm, first, second, firstStable, secondStable := twoReaders(t)
	secondStamp := env.StampOf(t, second)

	c := startCanary(t, cm, first, firstStable)
	t.Logf("config change -> first reader's canary pod printing the new value: %s", c.Took.Round(100*time.Millisecond))
	// Longer than the soak (10 s) and the coalescing window: a paused
	// canary counted as done would have let the second go by now.
	holdsStamp(t, second, secondStamp, 20*time.Second)
	expectMode(t, cm.Namespace, waitPods(t, second, secondStable, canaryReplicas), "one")

	promote(t, first)
	waitHealthy(t, first)
	healthyAt := time.Now()
	err := wait.PollUntilContextTimeout(env.SpecContext(t), 250*time.Millisecond, rolloutWait, true, func(context.Context) (bool, error) {
		return env.StampOf(t, second) != secondStamp, nil
	})
	if err != nil {
		t.Fatal("the second reader was not re-stamped after the first was Healthy")
	}
	t.Logf("first Healthy -> second re-stamped: %s (the soak is 10 s)", time.Since(healthyAt).Round(100*time.Millisecond))

	s := waitCanaryPaused(t, second, secondStable, rolloutWait)
	expectMode(t, cm.Namespace, waitPods(t, second, s.CurrentPodHash, 1), "two")
	promote(t, second)
	for _, ro := range []*unstructured.Unstructured{first, second} {
		s := waitHealthy(t, ro)
		expectMode(t, cm.Namespace, waitPods(t, ro, s.StableRS, canaryReplicas), "two")
		if n := len(rolloutReplicaSets(t, ro)); n != 2 {
			t.Errorf("Rollout %s has %d ReplicaSets, want 2: one per config", ro.GetName(), n)
		}
	}
}

// testWavesHaltOnAbort: the change's canary Rollout is aborted, which Argo
// Rollouts reports as Degraded: the change halts there (its halt record,
// RolloutHalted on it and on the ConfigMap), and the second reader keeps
// its stamp and its pods, which print the old value.
func testWavesHaltOnAbort(t *testing.T) {
	cm, first, second, firstStable, secondStable := twoReaders(t)
	secondStamp := env.StampOf(t, second)

	c := startCanary(t, cm, first, firstStable)
	aborted := time.Now()
	abort(t, first)
	expectHalted(t, first, cm, "RolloutAborted", "abort", aborted)
	expectAbortedToStable(t, first, firstStable, c, "one", "two")

	holdsStamp(t, second, secondStamp, 20*time.Second)
	expectMode(t, cm.Namespace, waitPods(t, second, secondStable, canaryReplicas), "one")
	if n := len(rolloutReplicaSets(t, second)); n != 1 {
		t.Errorf("Rollout %s has %d ReplicaSets while the change is halted, want 1", second.GetName(), n)
	}
}

// testWavesHaltOnDegraded: a change removes the key the readers mount
// (a file-only read, so no pod fails: the canary pod waits for its volume),
// and the change's canary Rollout passes its progress deadline, which Argo
// Rollouts reports as Degraded: the change halts there, and the second
// reader keeps its stamp and its pods.
func testWavesHaltOnDegraded(t *testing.T) {
	ns := env.NewNamespace(t, true)
	cm := sharedConfig(t, ns, map[string]string{"mode": "one"})
	var ros []*unstructured.Unstructured
	for _, name := range []string{"web-z", "web-a"} {
		ro := canaryRollout(ns, name, canaryReplicas, modeFileReader("shared"))
		if err := unstructured.SetNestedField(ro.Object, int64(progressDeadline/time.Second), "spec", "progressDeadlineSeconds"); err != nil {
			t.Fatal(err)
		}
		ros = append(ros, ro)
	}
	first, second := ros[0], ros[1]
	first.SetAnnotations(map[string]string{contract.RolloutOrderAnnotation: "-1"})
	stables := map[string]string{}
	for _, ro := range ros {
		env.Create(t, ro)
		stables[ro.GetName()] = waitHealthy(t, ro).StableRS
		expectFileMode(t, ro, waitPods(t, ro, stables[ro.GetName()], canaryReplicas), "one")
	}
	firstStamp, secondStamp := env.StampOf(t, first), env.StampOf(t, second)

	changed := time.Now()
	env.Update(t, cm, func() { delete(cm.Data, "mode") })
	s := waitRollout(t, first, "Degraded past its progress deadline", rolloutWait, func(s rolloutState) bool {
		return s.Phase == "Degraded" && strings.HasPrefix(s.Message, "ProgressDeadlineExceeded")
	})
	if env.StampOf(t, first) == firstStamp {
		t.Fatal("the first reader was not re-stamped for the change")
	}
	if pods, err := hashPods(env.SpecContext(t), first, s.CurrentPodHash); err != nil || len(pods) != 1 || ready(pods[0]) {
		t.Fatalf("want one canary pod, not ready, waiting for its volume: %v (%v)", pods, err)
	}
	expectHalted(t, first, cm, "ProgressDeadlineExceeded", "config change", changed)
	// The canary never became available, so both stable pods ran on.
	expectFileMode(t, first, waitPods(t, first, stables[first.GetName()], canaryReplicas), "one")

	holdsStamp(t, second, secondStamp, 20*time.Second)
	expectFileMode(t, second, waitPods(t, second, stables[second.GetName()], canaryReplicas), "one")
	if n := len(rolloutReplicaSets(t, second)); n != 1 {
		t.Errorf("Rollout %s has %d ReplicaSets while the change is halted, want 1", second.GetName(), n)
	}
}

func sortedPair(a, b string) []string {
	out := []string{a, b}
	slices.Sort(out)
	return out
}
