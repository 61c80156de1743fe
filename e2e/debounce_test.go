//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/confighash/confighash/internal/contract"
	"github.com/confighash/confighash/internal/restamp"
)

// The e2e confighash runs with the hook's defaults (--coalesce-window,
// --coalesce-max); the specs read them from restamp.DefaultOptions.

// stampChangeAfter polls the Deployment's stamp until it differs from
// from, and returns how long after since that was seen.
func stampChangeAfter(t *testing.T, d *appsv1.Deployment, from string, since time.Time) time.Duration {
	t.Helper()
	ctx := env.SpecContext(t)
	var took time.Duration
	err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		cur := &appsv1.Deployment{}
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(d), cur); err != nil {
			return false, err
		}
		if cur.Spec.Template.Annotations[contract.ChecksumAnnotation] != from {
			took = time.Since(since)
			return true, nil
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("stamp of %s never changed: %v", d.Name, err)
	}
	return took
}

func TestDebounceBurstIsOneRollout(t *testing.T) {
	f := newFixture(t)
	for i := range 5 {
		if i > 0 {
			time.Sleep(400 * time.Millisecond)
		}
		f.setCM(t, fmt.Sprintf("burst-%d", i))
	}
	// The original ReplicaSet plus exactly one rollout, held for settle.
	expectReplicaSets(t, f.ns, "app", 2)
	if want := expectedChecksum(t, f.ns, &f.app.Spec.Template.Spec, nil); env.StampOf(t, f.app) != want {
		t.Error("the one rollout did not end on the last content")
	}
	t.Logf("5 changes 0.4 s apart: 1 rollout")
}

func TestDebounceSingleChangeLatency(t *testing.T) {
	window := restamp.DefaultOptions().CoalesceWindow
	f := newFixture(t)
	before := env.StampOf(t, f.app)
	f.setCM(t, "2")
	took := stampChangeAfter(t, f.app, before, time.Now())
	t.Logf("single change: stamp changed %s after the write (window %s)", took.Round(time.Millisecond), window)
	if took > window+300*time.Millisecond {
		t.Errorf("stamp changed %s after the write, want within %s", took, window+300*time.Millisecond)
	}
	if took < window-100*time.Millisecond {
		t.Errorf("stamp changed %s after the write, before the window (%s) could have passed", took, window)
	}
}

// TestDebounceNeverSettlingSourceRollsEveryMaxWait is the one long spec:
// a source rewritten every 0.5 s for 30 s keeps extending the trailing
// window, so only the cap makes its readers roll.
func TestDebounceNeverSettlingSourceRollsEveryMaxWait(t *testing.T) {
	const (
		every = 500 * time.Millisecond
		span  = 30 * time.Second
	)
	coalesceMax := restamp.DefaultOptions().CoalesceMax
	f := newFixture(t)
	start := time.Now()
	last := env.StampOf(t, f.app)
	var changedAt []time.Duration
	for i := 0; time.Since(start) < span; i++ {
		f.setCM(t, fmt.Sprintf("flap-%d", i))
		if s := env.StampOf(t, f.app); s != last {
			last = s
			changedAt = append(changedAt, time.Since(start).Round(100*time.Millisecond))
		}
		time.Sleep(every)
	}
	// A rollout at least every max wait while it lasts, and one after it
	// settles: at most span/max + 1 re-stamps, at least span/max.
	want := expectedChecksum(t, f.ns, &f.app.Spec.Template.Spec, nil)
	if env.StampOf(t, f.app) != want {
		stampChangeAfter(t, f.app, last, time.Now())
	}
	rs := len(expectReplicaSets(t, f.ns, "app", len(observedReplicaSets(t, f.ns, "app")))) - 1
	t.Logf("a change every %s for %s: %d rollouts (stamp changes seen during the run at %v)", every, span, rs, changedAt)
	if hi, lo := int(span/coalesceMax)+1, int(span/coalesceMax); rs > hi || rs < lo {
		t.Errorf("%d rollouts, want between %d and %d", rs, lo, hi)
	}
	for i := 1; i < len(changedAt); i++ {
		if gap := changedAt[i] - changedAt[i-1]; gap > coalesceMax+2*time.Second {
			t.Errorf("%s between re-stamps, want at most the max wait %s", gap, coalesceMax)
		}
	}
	if env.StampOf(t, f.app) != want {
		t.Error("did not end on the last content")
	}
}
