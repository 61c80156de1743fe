package argocd

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// editGap is how long after self-heal reverted one hand edit the next one
// comes: "a few seconds apart". Argo CD's self-heal backoff counts from the
// end of the previous heal.
const editGap = 4 * time.Second

// noSelfHealBackoff turns Argo CD's self-heal backoff off: its install
// sets this variable from argocd-cmd-params-cm's
// controller.self.heal.backoff.timeout.seconds. At 0,
// --self-heal-timeout-seconds (default 0) applies instead: every heal at
// once.
const noSelfHealBackoff = "ARGOCD_APPLICATION_CONTROLLER_SELF_HEAL_BACKOFF_TIMEOUT_SECONDS=0"

// healWindow is the coalescing window that covers a heal: longer than the
// 0.4 to 1.5 s self-heal took here, shorter than editGap, so that each
// edit's window ends, reverted, before the next edit comes (a window that
// never ends runs into --coalesce-max, 10 s, wherever the edits are then).
const healWindow = 3 * time.Second

// backedOff is a revert slower than any heal's own latency seen here: self-heal
// waited for its backoff.
const backedOff = 2 * time.Second

// handEdit is one hand edit of the ConfigMap and what came of it.
type handEdit struct {
	// held is how long the edited value stayed before self-heal reverted
	// it, as seen by a poll every 200 ms.
	held     time.Duration
	rollouts int
}

func (e handEdit) String() string {
	return fmt.Sprintf("reverted after %s, %d rollouts", e.held.Round(10*time.Millisecond), e.rollouts)
}

// TestArgoCDControllerSelfHealOfHandEdit is spec d: hand edits of the
// ConfigMap in the cluster, each reverted by self-heal, editGap after the
// previous heal.
//
// Self-heal reverts an edit in 0.4 to 1.5 s here. confighash waits 1 s by
// default after the last change, and the revert is a change: a revert
// inside the window rolls nothing, a slower one rolls twice (onto the edit
// and back). That is a race, so it is measured, not asserted. What is
// certain is Argo CD's backoff: each heal after the first waits 2 s, then
// 6, 18, 54... (factor 3, cap 300 s) after the previous one, and only a
// sync to a new revision resets the count. With edits editGap apart, the
// third heal waits about 2 s more, the fourth 14 s: past any window
// (--coalesce-max caps it at 10 s). So the specs assert that the edit whose
// heal backed off rolled, with the default window and with healWindow, and
// that with the backoff off and healWindow no edit rolled.
func TestArgoCDControllerSelfHealOfHandEdit(t *testing.T) {
	argo := startArgoCD(t)
	v1 := version{greeting: "from git"}
	window := healWindow.String()

	t.Run("default flags", func(t *testing.T) {
		g, _ := newGitopsApp(t, argo, "selfheal-default", nil, v1)
		edits := g.handEdits(t, v1, 5, backedOff)
		g.logEdits(t, "default flags", edits)
		g.expectBackoffRolled(t, edits, backedOff)
	})

	t.Run("window alone", func(t *testing.T) {
		v := v1
		v.window = window
		g, _ := newGitopsApp(t, argo, "selfheal-window", nil, v)
		edits := g.handEdits(t, v, 5, healWindow)
		g.logEdits(t, "default flags, coalesce-window "+window, edits)
		g.expectBackoffRolled(t, edits, healWindow)
	})

	t.Run("backoff off and window", func(t *testing.T) {
		ctx := context.WithoutCancel(t.Context())
		if err := argo.run.StopController(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if err := argo.run.StopController(); err != nil {
				t.Error(err)
			}
			if err := argo.run.StartController(ctx); err != nil {
				t.Errorf("restarting the controller with its default flags: %v", err)
			}
		})
		if err := argo.run.StartController(ctx, noSelfHealBackoff); err != nil {
			t.Fatal(err)
		}
		v := v1
		v.window = window
		g, _ := newGitopsApp(t, argo, "selfheal-nobackoff", nil, v)
		edits := g.handEdits(t, v, 5, 0)
		total := g.logEdits(t, noSelfHealBackoff+", coalesce-window "+window, edits)
		if total != 0 {
			t.Errorf("with the backoff off and a %s window, hand edits rolled the Deployment %d times", window, total)
		}
		g.expectPrints(t, v)
	})
}

// expectBackoffRolled checks that the edits ended on one whose revert
// waited longer than beyond, for the backoff, and that it rolled.
func (g *gitopsApp) expectBackoffRolled(t *testing.T, edits []handEdit, beyond time.Duration) {
	t.Helper()
	last := edits[len(edits)-1]
	if last.held <= beyond {
		t.Errorf("%d hand edits %s apart: no revert waited longer than %s, so self-heal's backoff was not seen; measure again and update docs/argocd.md", len(edits), editGap, beyond)
		return
	}
	if last.rollouts == 0 {
		t.Errorf("hand edit %d waited %s for self-heal and rolled nothing", len(edits), last.held.Round(10*time.Millisecond))
		return
	}
	t.Logf("spec d: zero rollouts stops holding at the latest at hand edit %d, whose revert waited %s (self-heal backoff)", len(edits), last.held.Round(10*time.Millisecond))
}

// logEdits logs each edit and returns their rollouts.
func (g *gitopsApp) logEdits(t *testing.T, setting string, edits []handEdit) int {
	t.Helper()
	total := 0
	for i, e := range edits {
		t.Logf("spec d, %s: hand edit %d, %s after the previous heal: %s", setting, i+1, editGap, e)
		total += e.rollouts
	}
	t.Logf("spec d, %s: %d rollouts for %d hand edits", setting, total, len(edits))
	return total
}

// handEdits edits the ConfigMap by hand up to n times, each editGap after
// self-heal reverted the previous one, and reports each edit (with until
// set, it stops after the first whose revert took longer). An edit's rollouts are
// the revisions the Deployment gained until the next edit (or, for the
// last, until it settled): its re-stamp comes a coalescing window after the
// revert, well within the gap.
func (g *gitopsApp) handEdits(t *testing.T, v version, n int, until time.Duration) []handEdit {
	t.Helper()
	var edits []handEdit
	prev := g.settled(t)
	for i := range n {
		value := "hand edit " + strconv.Itoa(i+1)
		patch := fmt.Sprintf(`{"data":{"greeting":%q}}`, value)
		if _, err := the.kube.CoreV1().ConfigMaps(g.ns).Patch(t.Context(), "web-config", types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
		edited := time.Now()
		var cm *corev1.ConfigMap
		poll(t, "self-heal to revert "+value, 10*time.Minute, func(ctx context.Context) (bool, error) {
			var err error
			cm, err = the.kube.CoreV1().ConfigMaps(g.ns).Get(ctx, "web-config", metav1.GetOptions{})
			return err == nil && cm.Data["greeting"] == v.greeting, nil
		})
		e := handEdit{held: time.Since(edited)}
		time.Sleep(editGap)
		var cur rollouts
		if i == n-1 {
			cur = g.settled(t)
		} else {
			cur = g.current(t)
		}
		e.rollouts = cur.since(prev)
		prev = cur
		edits = append(edits, e)
		if until > 0 && e.held > until {
			// Let the roll back to Git's content finish before the spec
			// reads the pods.
			cur = g.settled(t)
			edits[len(edits)-1].rollouts = cur.since(prev) + e.rollouts
			break
		}
	}
	return edits
}

// current is the Deployment's rollouts now, without waiting.
func (g *gitopsApp) current(t *testing.T) rollouts {
	t.Helper()
	d := g.mustDeployment(t)
	rev, _ := strconv.Atoi(d.Annotations["deployment.kubernetes.io/revision"])
	var names []string
	for _, rs := range g.argo.env.ReplicaSets(t, g.ns, "web") {
		names = append(names, rs.Name)
	}
	return rollouts{revision: rev, replicaSets: names}
}
