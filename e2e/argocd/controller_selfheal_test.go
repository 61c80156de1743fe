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
const editGap = 3 * time.Second

// noSelfHealBackoff is the setting that keeps repeated hand edits from
// rolling: Argo CD's install sets this variable from argocd-cmd-params-cm's
// controller.self.heal.backoff.timeout.seconds. At 0 the backoff is off and
// --self-heal-timeout-seconds (default 0) applies: every heal at once.
const noSelfHealBackoff = "ARGOCD_APPLICATION_CONTROLLER_SELF_HEAL_BACKOFF_TIMEOUT_SECONDS=0"

// handEdit is one hand edit of the ConfigMap and what came of it.
type handEdit struct {
	// held is how long the edited value stayed before self-heal reverted it.
	held     time.Duration
	rollouts int
}

func (e handEdit) String() string {
	return fmt.Sprintf("reverted after %s, %d rollouts", e.held.Round(10*time.Millisecond), e.rollouts)
}

// TestArgoCDControllerSelfHealOfHandEdit is spec d: a hand edit of the
// ConfigMap in the cluster, reverted by self-heal.
//
// With Argo CD's default flags the first edit rolls nothing: self-heal
// reverts it inside confighash's 1 s coalescing window, which restarts on
// the revert, and at its end the content is what the stamp already says.
// But self-heal backs off when it must heal again and again: each heal
// after the first waits 2 s, then 6, 18, 54... (factor 3, cap 300 s) after
// the previous one, and the count is reset only by a sync to a new
// revision. Edits editGap apart: the second is reverted at once (2 s <
// 3 s), the third waits about 3 s more, outside the window, and the
// Deployment rolls twice (onto the edit and back). No coalescing window
// keeps up with a backoff that reaches minutes. With the backoff off
// (noSelfHealBackoff) every edit is reverted at once, and none rolls.
func TestArgoCDControllerSelfHealOfHandEdit(t *testing.T) {
	argo := startArgoCD(t)
	argo.logsOnFailure(t)
	v1 := version{greeting: "from git"}

	t.Run("default backoff", func(t *testing.T) {
		g, _ := newGitopsApp(t, argo, "selfheal-default", nil, v1)
		edits := g.handEdits(t, v1, 5, true)
		for i, e := range edits {
			t.Logf("spec d, default flags: hand edit %d, %s after the previous heal: %s", i+1, editGap, e)
		}
		if edits[0].rollouts != 0 {
			t.Errorf("the first hand edit rolled the Deployment: %s", edits[0])
		}
		last := edits[len(edits)-1]
		if last.rollouts == 0 {
			t.Errorf("%d hand edits %s apart rolled nothing: self-heal's backoff was not seen, so the setting below proves nothing; measure again and update docs/argocd.md", len(edits), editGap)
		} else {
			t.Logf("spec d: zero rollouts stops holding at hand edit %d, whose revert waited %s (self-heal backoff)", len(edits), last.held.Round(10*time.Millisecond))
		}
	})

	t.Run("backoff off", func(t *testing.T) {
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
		g, _ := newGitopsApp(t, argo, "selfheal-nobackoff", nil, v1)
		edits := g.handEdits(t, v1, 5, false)
		total := 0
		for i, e := range edits {
			t.Logf("spec d, %s: hand edit %d, %s after the previous heal: %s", noSelfHealBackoff, i+1, editGap, e)
			total += e.rollouts
		}
		t.Logf("spec d: %d rollouts for %d hand edits with the self-heal backoff off", total, len(edits))
		if total != 0 {
			t.Errorf("with the backoff off, hand edits rolled the Deployment %d times", total)
		}
		g.expectPrints(t, v1)
	})
}

// handEdits edits the ConfigMap by hand up to n times, each editGap after
// self-heal reverted the previous one, and reports each edit (with
// untilRoll, it stops after the first that rolled). An edit's rollouts are
// the revisions the Deployment gained until the next edit (or, for the
// last, until it settled): its re-stamp comes a coalescing window after the
// revert, well within the gap.
func (g *gitopsApp) handEdits(t *testing.T, v version, n int, untilRoll bool) []handEdit {
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
		if untilRoll && e.rollouts > 0 {
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
