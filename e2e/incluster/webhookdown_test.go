//go:build e2e

package incluster

import (
	"testing"
	"time"
)

// TestWebhookDownBlocksNothing scales confighash to zero. With no endpoint
// behind the Service, failurePolicy Ignore lets every write through: a
// Deployment is created (unstamped) and another is updated. A config change
// made meanwhile is caught up once confighash is back: its reader rolls
// exactly once, to the new content. The Deployment created while confighash
// was down is, like any workload that predates confighash, left alone until
// its own config changes; then it is stamped.
func TestWebhookDownBlocksNothing(t *testing.T) {
	ctx := env.SpecContext(t)
	ns := env.NewNamespace(t, true)
	cm := sharedConfig(t, ns, map[string]string{"v": "1"})
	before := readerOf(ns, 0)
	env.Create(t, before)
	stamp := env.StampOf(t, before)
	waitReplicaSetCount(t, before, 1)

	if err := env.Confighash.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if len(confighashPods(t)) == 0 {
			_ = env.Confighash.Start(env.SpecContext(t))
		}
	})

	begin := time.Now()
	during := readerOf(ns, 1)
	env.Create(t, during)
	env.Update(t, before, func() { before.Labels = map[string]string{"touched": "while-down"} })
	env.Update(t, cm, func() { cm.Data["v"] = "2" })
	t.Logf("create, update and config change with confighash at 0 replicas took %s", time.Since(begin).Round(time.Millisecond))
	if s := env.StampOf(t, during); s != "" {
		t.Fatalf("created while confighash was down, yet stamped %q", s)
	}
	if s := env.StampOf(t, before); s != stamp {
		t.Fatalf("stamp changed while confighash was down: %q -> %q", stamp, s)
	}

	if err := env.Confighash.Start(ctx); err != nil {
		t.Fatal(err)
	}
	waitReplicaSetCount(t, before, 2)
	time.Sleep(settle)
	if n := len(env.ReplicaSets(t, ns, before.Name)); n != 2 {
		t.Fatalf("the change made while down rolled %s %d times, want once", before.Name, n-1)
	}
	if s := env.StampOf(t, during); s != "" {
		t.Fatalf("a workload that predates confighash's start was stamped without a config change: %q", s)
	}

	env.Update(t, cm, func() { cm.Data["v"] = "3" })
	waitReplicaSetCount(t, during, 2)
	if env.StampOf(t, during) == "" {
		t.Fatal("config change did not stamp the workload created while confighash was down")
	}
}
