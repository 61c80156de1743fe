//go:build e2e

package incluster

import (
	"testing"
	"time"
)

// TestPodsRunWithTheNewValue is the user's view. The sample app prints a
// ConfigMap key and a Secret key, each read through the environment and a
// mounted file. A change of the ConfigMap gives exactly one rollout whose new
// pod prints the new value; the revert brings back the old ReplicaSet, whose
// pod prints the old value again. The logs are read through the API server,
// as `kubectl logs` does.
func TestPodsRunWithTheNewValue(t *testing.T) {
	ns := env.NewNamespace(t, true)
	cm, sec := sampleConfig(t, ns, "hello", "hunter2")
	d := sampleApp(ns)
	env.Create(t, d)
	if err := env.WaitRollout(env.SpecContext(t), ns, d.Name, 2*time.Minute); err != nil {
		t.Fatal(err)
	}
	first := env.CurrentReplicaSet(t, d.Namespace, d.Name)
	pod, _ := runningPod(t, ns, first)
	expectPrints(t, ns, pod, "hello", "hunter2")

	changed := time.Now()
	env.Update(t, cm, func() { cm.Data["greeting"] = "hola" })
	second := waitNewReplicaSet(t, d, first)
	pod, readyAt := runningPod(t, ns, second)
	t.Logf("ConfigMap change to new pod Ready: %s", readyAt.Sub(changed).Round(100*time.Millisecond))
	expectPrints(t, ns, pod, "hola", "hunter2")
	if err := env.WaitRollout(env.SpecContext(t), ns, d.Name, 2*time.Minute); err != nil {
		t.Fatal(err)
	}
	time.Sleep(settle)
	if n := len(env.ReplicaSets(t, ns, d.Name)); n != 2 {
		t.Fatalf("one change gave %d ReplicaSets, want 2", n)
	}

	env.Update(t, cm, func() { cm.Data["greeting"] = "hello" })
	waitCurrent(t, d, first)
	pod, _ = runningPod(t, ns, first)
	expectPrints(t, ns, pod, "hello", "hunter2")
	time.Sleep(settle)
	if n := len(env.ReplicaSets(t, ns, d.Name)); n != 2 {
		t.Fatalf("the revert created a ReplicaSet: have %d, want 2", n)
	}

	t.Run("a Secret change rolls too", func(t *testing.T) {
		env.Update(t, sec, func() { sec.Data = map[string][]byte{"password": []byte("correct horse")} })
		third := waitNewReplicaSet(t, d, first)
		pod, _ := runningPod(t, ns, third)
		expectPrints(t, ns, pod, "hello", "correct horse")
	})
}
