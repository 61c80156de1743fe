//go:build e2e

package incluster

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/confighash/confighash/internal/contract"
)

// TestWindowWaitSurvivesALeaderDeletion: a change in a namespace whose
// rollout window opens at the next minute (at least 45 s away) waits; the
// leader's pod is deleted while it waits, and the replica that takes the
// Lease over keeps the stamp too, deciding from the objects alone; when
// the window opens the reader rolls once, and its new pod prints the new
// value.
func TestWindowWaitSurvivesALeaderDeletion(t *testing.T) {
	ctx := env.SpecContext(t)
	ns := env.NewNamespace(t, true)
	opens := time.Now().UTC().Add(45 * time.Second).Truncate(time.Minute).Add(time.Minute)
	schedule := fmt.Sprintf("* %s-%s UTC", opens.Format("15:04"), opens.Add(2*time.Minute).Format("15:04"))
	nsObj := &corev1.Namespace{}
	nsObj.Name = ns
	env.Update(t, nsObj, func() {
		if nsObj.Annotations == nil {
			nsObj.Annotations = map[string]string{}
		}
		nsObj.Annotations[contract.WindowAnnotation] = schedule
	})
	cm := sharedConfig(t, ns, map[string]string{"mode": "good"})
	web := pinnedReader(ns, "web", 1)
	env.Create(t, web)
	if err := env.WaitRollout(ctx, ns, web.Name, 3*time.Minute); err != nil {
		t.Fatal(err)
	}
	stamp := env.StampOf(t, web)

	env.Update(t, cm, func() { cm.Data["mode"] = "second" })
	deleteLeaderOnce(t, func() bool { return true })
	for time.Until(opens) > 2*time.Second {
		if got := env.StampOf(t, web); got != stamp {
			t.Fatalf("re-stamped to %s %s before the window %q opens", got, time.Until(opens).Round(time.Second), schedule)
		}
		time.Sleep(time.Second)
	}
	rs := restampedTo(t, web, stamp)
	t.Logf("re-stamped %s after the window opened", time.Since(opens).Round(100*time.Millisecond))
	if n := len(env.ReplicaSets(t, ns, web.Name)); n != 2 {
		t.Errorf("%d ReplicaSets, want 2: one rollout for the change", n)
	}
	expectPrinted(t, readyPods(t, ns, rs, 1)[0], "second")
}
