//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/confighash/confighash/cmd/confighash/app"
	"github.com/confighash/confighash/internal/contract"
	"github.com/confighash/confighash/internal/status"
)

// TestHookFlapHoldSurvivesLeaderChange flips a Secret every 2 s for 3
// minutes, as issue 9 asks, and restarts confighash half way (a new leader
// with no memory of its own). The reader must roll the flap limit's worth
// of times, then hold, through the restart, until the Secret has been
// quiet, and then roll once more onto the last content. Every flip writes
// a new value, so each rollout is a new ReplicaSet and they can be counted.
func TestHookFlapHoldSurvivesLeaderChange(t *testing.T) {
	const (
		period  = 2 * time.Second
		flapFor = 3 * time.Minute
		// Shorter than the default minute only to keep the spec short; the
		// hold logic is the same.
		quiet = 15 * time.Second
	)
	args := []string{fmt.Sprintf("--flap-quiet=%s", quiet)}
	limit := app.DefaultOptions().Hook.FlapLimit
	stopConfighash(t)
	if err := env.Confighash.Start(env.SpecContext(t), args...); err != nil {
		t.Skipf("cannot pass flags to this confighash: %v", err)
	}
	t.Cleanup(func() { _ = env.Confighash.Stop(context.Background()) })
	f := newFixture(t)

	ctx, cancel := context.WithTimeout(context.Background(), flapFor+2*time.Minute)
	defer cancel()
	holdNow := func() string {
		d := &appsv1.Deployment{}
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(f.app), d); err != nil {
			t.Fatal(err)
		}
		return d.Annotations[contract.HoldAnnotation]
	}

	// The leader change runs beside the flips, which go on meanwhile.
	restarted := make(chan error, 1)
	restarting := false
	start := time.Now()
	var holdBefore, holdAfter string
	flips := 0
	for next := start; time.Since(start) < flapFor; next = next.Add(period) {
		time.Sleep(time.Until(next))
		flips++
		f.setSecret(t, fmt.Sprintf("flap-%d", flips))
		elapsed := time.Since(start)
		if !restarting && elapsed >= flapFor/2 {
			restarting = true
			holdBefore = holdNow()
			go func() {
				err := env.Confighash.Stop(ctx)
				if err == nil {
					err = env.Confighash.Start(ctx, args...)
				}
				restarted <- err
			}()
		}
		if holdAfter == "" && elapsed >= flapFor-10*time.Second {
			holdAfter = holdNow()
			// What an operator sees: held, from the annotation.
			if w := statusOf(t, f.ns, "deployment/app", 1); w.State != status.StateHeld || w.Hold == nil {
				t.Errorf("confighash status near the end: %s (%s), hold %+v; want held", w.State, w.Reason, w.Hold)
			}
		}
	}
	if err := <-restarted; err != nil {
		t.Fatalf("restarting confighash: %v", err)
	}
	t.Logf("%d flips in %s; hold before the restart %q, near the end %q", flips, time.Since(start).Round(time.Second), holdBefore, holdAfter)
	if _, err := contract.ParseHold(holdBefore); err != nil {
		t.Errorf("not held before the restart: %v", err)
	}
	if holdAfter != holdBefore {
		t.Errorf("near the end the hold is %q, want the one from before the restart, %q", holdAfter, holdBefore)
	}

	// Once the Secret has been quiet, the last content, once.
	want := expectedChecksum(t, f.ns, &f.app.Spec.Template.Spec, nil)
	err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, quiet+time.Minute, true, func(context.Context) (bool, error) {
		return env.StampOf(t, f.app) == want, nil
	})
	if err != nil {
		t.Fatalf("stamp %q after the flapping stopped, want the last content's %q", env.StampOf(t, f.app), want)
	}
	time.Sleep(settle)
	if h := holdNow(); h != "" {
		t.Errorf("hold annotation still there after the hold ended: %q", h)
	}
	// The fixture made one ReplicaSet before the flapping began.
	rollouts := len(replicaSetNames(t, f.ns, "app")) - 1
	t.Logf("ROLLOUTS: %d new ReplicaSets of the reader for %d flips (flap limit %d), created at %v after the first flip",
		rollouts, flips, limit, rolloutTimes(t, f.ns, "app", start))
	if rollouts > limit+1 {
		t.Errorf("%d rollouts, want at most the limit %d and one onto the last content", rollouts, limit)
	}
	// The Deployment's current ReplicaSet carries the last content's stamp.
	env.CurrentReplicaSet(t, f.ns, "app")
}

// rolloutTimes lists, sorted, when each ReplicaSet of Deployment name made
// after since was created, as offsets from since.
func rolloutTimes(t *testing.T, ns, name string, since time.Time) []time.Duration {
	t.Helper()
	var out []time.Duration
	for _, rs := range env.ReplicaSets(t, ns, name) {
		// Creation times have a resolution of a second.
		if !rs.CreationTimestamp.Time.Before(since.Truncate(time.Second)) {
			out = append(out, rs.CreationTimestamp.Time.Sub(since).Round(time.Second))
		}
	}
	slices.Sort(out)
	return out
}
