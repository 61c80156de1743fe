package argocd

import (
	"context"
	"slices"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The TestArgoCDController specs run Argo CD's own application controller
// and repo-server (v3.6.1, built by the harness) against a cluster with a
// node and confighash deployed with its shipped flags, waves on (make test:
// `cluster exec --node`). Each Application syncs from a local Git
// repository with automated sync, prune and self-heal and the
// ignoreDifferences entries of docs/argocd.md. Each spec counts rollouts in
// the Deployment's revisions and ReplicaSets, and reads what the pods print.

// stamp is the live Deployment's confighash.dev/checksum.
func (g *gitopsApp) stamp(t *testing.T) string {
	t.Helper()
	return g.argo.env.StampOf(t, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: g.ns, Name: "web"}})
}

// TestArgoCDControllerStaysSyncedThroughRefreshes is spec a: after the
// first sync and three refreshes the Application is Synced and Healthy, it
// was never seen OutOfSync, and nothing rolled.
func TestArgoCDControllerStaysSyncedThroughRefreshes(t *testing.T) {
	argo := startArgoCD(t)
	v1 := version{greeting: "hello from git"}
	g, sha := newGitopsApp(t, argo, "refresh", nil, v1)
	stop := g.watchSync(t)
	before := g.settled(t)
	if g.stamp(t) == "" {
		t.Fatal("the Deployment carries no stamp; nothing would be tested")
	}
	for range 3 {
		g.refresh(t)
		g.waitSynced(t, sha)
	}
	after := g.settled(t)
	notSynced, samples := stop()
	t.Logf("spec a: %d rollouts after the first sync and 3 refreshes (%s); %d samples of the Application, not Synced: %q", after.since(before), after, samples, notSynced)
	if len(notSynced) > 0 {
		t.Errorf("the Application was seen not Synced: %q", notSynced)
	}
	if after.since(before) != 0 || len(after.replicaSets) != 1 {
		t.Errorf("refreshes rolled the Deployment: before %s, after %s", before, after)
	}
	g.expectPrints(t, v1)
}

// TestArgoCDControllerConfigCommitRollsOnce is spec b: a commit that
// changes the ConfigMap's value rolls the Deployment exactly once, and its
// pods print the new value.
func TestArgoCDControllerConfigCommitRollsOnce(t *testing.T) {
	commitRollsOnce(t, "spec b", "config", "change the greeting", version{greeting: "two"})
}

// TestArgoCDControllerConfigAndTemplateCommitRollsOnce is spec c: one
// commit that changes the ConfigMap and the pod template (an argument and a
// variable) together rolls the Deployment exactly once, not once for the
// template and again for the config.
func TestArgoCDControllerConfigAndTemplateCommitRollsOnce(t *testing.T) {
	commitRollsOnce(t, "spec c", "together", "change the greeting and the args", version{greeting: "two", stage: "second"})
}

// commitRollsOnce commits v2 over an app synced at greeting "one": the
// Deployment must roll exactly once, onto one new ReplicaSet, whose pods
// print v2.
func commitRollsOnce(t *testing.T, spec, app, message string, v2 version) {
	t.Helper()
	g, _ := newGitopsApp(t, startArgoCD(t), app, nil, version{greeting: "one"})
	before := g.settled(t)
	g.commit(t, message, v2)
	after := g.settled(t)
	t.Logf("%s: %d rollouts for the commit %q (%s -> %s)", spec, after.since(before), message, before, after)
	if after.since(before) != 1 || len(after.replicaSets) != 2 {
		t.Errorf("want exactly one rollout onto one new ReplicaSet: before %s, after %s", before, after)
	}
	g.expectPrints(t, v2)
}

// TestArgoCDControllerRollbackToEarlierRevision is spec e: syncing back to
// an earlier Git revision returns the Deployment to its earlier ReplicaSet
// (one rollout, no new ReplicaSet), whose pods print the old value.
func TestArgoCDControllerRollbackToEarlierRevision(t *testing.T) {
	argo := startArgoCD(t)
	v1 := version{greeting: "old"}
	g, sha1 := newGitopsApp(t, argo, "rollback", nil, v1)
	rs1 := g.argo.env.CurrentReplicaSet(t, g.ns, "web")
	g.commit(t, "change the greeting", version{greeting: "new"})
	rolled := g.settled(t)
	if len(rolled.replicaSets) != 2 {
		t.Fatalf("the commit did not roll onto a new ReplicaSet: %s", rolled)
	}
	g.patch(t, map[string]any{"spec": map[string]any{"source": map[string]any{"targetRevision": sha1}}})
	g.waitSynced(t, sha1)
	back := g.settled(t)
	t.Logf("spec e: %d rollouts for the sync back to %.8s (%s -> %s)", back.since(rolled), sha1, rolled, back)
	if back.since(rolled) != 1 || !slices.Equal(back.replicaSets, rolled.replicaSets) {
		t.Errorf("want one rollout and no new ReplicaSet: before %s, after %s", rolled, back)
	}
	if rs := g.expectPrints(t, v1); rs != rs1 {
		t.Errorf("the Deployment is on ReplicaSet %s, not on its earlier %s", rs, rs1)
	}
}

// TestArgoCDControllerReplaceSyncRollsNothing is spec f: with the sync
// options ServerSideApply=true and Replace=true, a sync that changes
// nothing in Git writes the objects again (their resourceVersion moves) and
// rolls nothing, and the Application stays Synced.
func TestArgoCDControllerReplaceSyncRollsNothing(t *testing.T) {
	argo := startArgoCD(t)
	opts := []string{"ServerSideApply=true", "Replace=true"}
	v1 := version{greeting: "same"}
	g, sha := newGitopsApp(t, argo, "replace", opts, v1)
	before := g.settled(t)
	stamp := g.stamp(t)
	stop := g.watchSync(t)
	for range 2 {
		d0 := g.mustDeployment(t)
		g.syncNow(t, sha, opts)
		if d1 := g.mustDeployment(t); d1.ResourceVersion == d0.ResourceVersion {
			t.Fatalf("the sync did not write the Deployment (resourceVersion %s); nothing would be tested", d1.ResourceVersion)
		}
	}
	after := g.settled(t)
	notSynced, samples := stop()
	t.Logf("spec f: %d rollouts for 2 syncs with %v that change nothing (%s); %d samples, not Synced: %q", after.since(before), opts, after, samples, notSynced)
	if after.since(before) != 0 || len(after.replicaSets) != 1 || g.stamp(t) != stamp {
		t.Errorf("a sync that changes nothing rolled: before %s, after %s", before, after)
	}
	if len(notSynced) > 0 {
		t.Errorf("the Application was seen not Synced: %q", notSynced)
	}
	g.expectPrints(t, v1)
}

// TestArgoCDControllerCopiedStampStaysSynced is spec g: a Git manifest
// that carries the stamp copied from the cluster stays Synced with the
// documented entries, and nothing rolls, through the commit and a sync of
// it. Then a config commit that leaves the copied, now stale, stamp in Git
// rolls once, and the Application stays Synced (self-heal does not fight
// the re-stamp).
func TestArgoCDControllerCopiedStampStaysSynced(t *testing.T) {
	argo := startArgoCD(t)
	v1 := version{greeting: "copied"}
	g, _ := newGitopsApp(t, argo, "copied", nil, v1)
	before := g.settled(t)
	v1.stamp = g.stamp(t)
	stop := g.watchSync(t)
	sha := g.commit(t, "copy the live stamp into Git", v1)
	g.syncNow(t, sha, nil)
	after := g.settled(t)
	notSynced, samples := stop()
	t.Logf("spec g: %d rollouts for a commit holding the copied stamp and a sync of it (%s); %d samples, not Synced: %q", after.since(before), after, samples, notSynced)
	if after.since(before) != 0 || len(after.replicaSets) != 1 {
		t.Errorf("the copied stamp rolled the Deployment: before %s, after %s", before, after)
	}
	if len(notSynced) > 0 {
		t.Errorf("the Application was seen not Synced: %q", notSynced)
	}

	v2 := version{greeting: "changed", stamp: v1.stamp}
	g.commit(t, "change the greeting, keep the copied stamp", v2)
	rolled := g.settled(t)
	if g.stamp(t) == v1.stamp {
		t.Fatal("the config change did not re-stamp the Deployment")
	}
	stop = g.watchSync(t)
	g.refresh(t)
	final := g.settled(t)
	notSynced, samples = stop()
	t.Logf("spec g: %d rollouts for a config commit with the stale copied stamp in Git (%s), then %d (%d samples, not Synced: %q)", rolled.since(after), rolled, final.since(rolled), samples, notSynced)
	if rolled.since(after) != 1 || final.since(rolled) != 0 {
		t.Errorf("want one rollout for the config change and none after: %s, %s, %s", after, rolled, final)
	}
	if len(notSynced) > 0 {
		t.Errorf("with the stale stamp in Git the Application was seen not Synced: %q", notSynced)
	}
	g.expectPrints(t, v2)
}

func (g *gitopsApp) mustDeployment(t *testing.T) *appsv1.Deployment {
	t.Helper()
	d, err := g.deployment(context.WithoutCancel(t.Context()))
	if err != nil {
		t.Fatal(err)
	}
	return d
}
