package argocd

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/argoproj/argo-cd/v3/pkg/apis/application/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/confighash/confighash/e2e/controlplane"
	"github.com/confighash/confighash/e2e/framework"
	"github.com/confighash/confighash/internal/contract"
	"github.com/confighash/confighash/internal/pinning"
	"github.com/confighash/confighash/internal/waves"
)

// pinnerRole is the ClusterRole of manifests/components/pinning that a
// pinning namespace binds (app.PinnerRole; this module does not import the
// binary's packages).
const pinnerRole = "confighash-pinner"

// pinnedWindow is the Deployment's coalescing window in Git: longer than
// self-heal's first revert of a hand edit (0.4 to 1.5 s here), so that the
// edit of the ConfigMap is reverted inside it.
const pinnedWindow = 5 * time.Second

// TestArgoCDControllerPinnedApplication is spec h: an Application in a
// namespace that pins (manifests/components/pinning), with automated sync,
// prune and self-heal, the documented ignoreDifferences and Argo CD's
// orphaned-resource warnings on. The first sync's pods are pinned; a config
// commit rolls once onto pinned pods of the new value; `kubectl rollout
// undo` brings back the first ReplicaSet, whose pods print the first value,
// and Argo CD neither reports it nor undoes it; hand edits of the ConfigMap
// and of the replicas are self-healed and roll nothing. Throughout, the
// Application stays Synced (but for the hand edits) and shows no orphaned
// resource: the snapshots are owned by ReplicaSets, so they are children,
// not top-level objects. A ConfigMap made by hand, unowned, shows that the
// warning is on.
func TestArgoCDControllerPinnedApplication(t *testing.T) {
	argo := startArgoCD(t)
	argo.logsOnFailure(t)
	warnOrphans(t, argo)
	window := pinnedWindow.String()
	v1 := version{greeting: "pinned one", window: window}
	g, _ := newGitopsApp(t, argo, "pinned", nil, v1, pinningNamespace)

	// 1. The first sync.
	stop := g.watchSync(t)
	first := g.settled(t)
	stamp1 := g.stamp(t)
	rs1 := g.expectPrints(t, v1)
	snap1 := g.expectPinned(t, rs1, stamp1, v1)
	t.Logf("spec h: first sync: %s, pods of %s pinned to configmap/%s", first, rs1, snap1)
	expectSyncedThroughout(t, "the first sync", stop)

	// 2. A config commit: OutOfSync until it is synced, as any commit;
	// Synced from then on, through the re-stamp and the rollout.
	v2 := version{greeting: "pinned two", window: window}
	sha2 := g.commit(t, "change the greeting", v2)
	stop = g.watchSync(t)
	rolled := g.settled(t)
	stamp2 := g.stamp(t)
	rs2 := g.expectPrints(t, v2)
	snap2 := g.expectPinned(t, rs2, stamp2, v2)
	t.Logf("spec h: %d rollouts for a config commit (%s), pods of %s pinned to configmap/%s", rolled.since(first), rolled, rs2, snap2)
	if rolled.since(first) != 1 || len(rolled.replicaSets) != 2 || snap2 == snap1 {
		t.Fatalf("want one rollout onto a new ReplicaSet with a new snapshot: before %s, after %s, snapshots %s and %s", first, rolled, snap1, snap2)
	}

	// 3. kubectl rollout undo, with the real kubectl (no field manager).
	if out, err := argo.env.Run(t.Context(), "", "rollout", "undo", "deployment/web", "-n", g.ns); err != nil {
		t.Fatalf("kubectl rollout undo: %v\n%s", err, out)
	}
	back := g.settled(t)
	g.refresh(t)
	g.waitSynced(t, sha2)
	after := g.settled(t)
	t.Logf("spec h: kubectl rollout undo: %s, then after a refresh %s", back, after)
	if back.since(rolled) != 1 || !slices.Equal(back.replicaSets, rolled.replicaSets) || after.since(back) != 0 {
		t.Errorf("want the undo to roll once, back onto an existing ReplicaSet, and nothing after: %s, %s, %s", rolled, back, after)
	}
	if got := g.stamp(t); got != stamp1 {
		t.Fatalf("after the undo the stamp is %s, want the first revision's %s (Argo CD or confighash undid the undo)", got, stamp1)
	}
	if rs := g.expectPrints(t, v1); rs != rs1 {
		t.Errorf("after the undo the Deployment is on %s, want the first ReplicaSet %s", rs, rs1)
	}
	if snap := g.expectPinned(t, rs1, stamp1, v1); snap != snap1 {
		t.Errorf("after the undo the pods read configmap/%s, want the first revision's %s", snap, snap1)
	}
	g.expectRolledBack(t)
	expectSyncedThroughout(t, "the config commit's rollout and the undo", stop)

	// 4. Hand edits of what Git holds, self-healed: the ConfigMap (reverted
	// inside the window, so its content is again what the rollback named)
	// and the replicas (self-heal writes the undone Deployment).
	edits := g.handEdits(t, v2, 1, 0)
	t.Logf("spec h: hand edit of the ConfigMap after the undo: %s", edits[0])
	if edits[0].held >= pinnedWindow {
		t.Fatalf("self-heal took %s, not inside the %s window: nothing would be tested", edits[0].held, pinnedWindow)
	}
	healed := g.scaleByHand(t, 2, sha2)
	t.Logf("spec h: hand scale to 2 replicas, self-healed: %s", healed)
	if edits[0].rollouts != 0 || healed.since(after) != 0 || !slices.Equal(healed.replicaSets, after.replicaSets) || g.stamp(t) != stamp1 {
		t.Errorf("self-heal of hand edits rolled the undone Deployment: %s, then %s, stamp %s (want %s)", after, healed, g.stamp(t), stamp1)
	}
	g.expectPrints(t, v1)
	g.expectPinned(t, rs1, stamp1, v1)
	g.expectRolledBack(t)

	// 5. The Application's resources and conditions.
	g.refresh(t)
	g.expectNoOrphans(t, snap1, snap2)
	g.expectOrphanWarned(t)
}

// expectSyncedThroughout stops a watchSync and fails the test if it saw
// the Application not Synced or warning of orphaned resources.
func expectSyncedThroughout(t *testing.T, what string, stop func() ([]string, int)) {
	t.Helper()
	seen, samples := stop()
	t.Logf("spec h: %d samples of the Application through %s; not Synced or orphans: %q", samples, what, seen)
	if len(seen) > 0 {
		t.Errorf("through %s the Application was seen not Synced or with orphaned resources: %q", what, seen)
	}
}

// pinningNamespace labels ns for pinning and binds confighash-pinner to
// confighash's ServiceAccount there, as a user does.
func pinningNamespace(t *testing.T, ns string) {
	t.Helper()
	ctx := t.Context()
	patch := fmt.Sprintf(`{"metadata":{"labels":{%q:%q}}}`, pinning.NamespaceLabel, pinning.NamespaceEnabled)
	if _, err := the.kube.CoreV1().Namespaces().Patch(ctx, ns, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatalf("labelling namespace %s for pinning: %v", ns, err)
	}
	rb := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: pinnerRole},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: pinnerRole},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: framework.Namespace, Name: "confighash"}},
	}
	if _, err := the.kube.RbacV1().RoleBindings(ns).Create(ctx, rb, metav1.CreateOptions{}); err != nil {
		t.Fatalf("binding %s in %s: %v", pinnerRole, ns, err)
	}
	// The webhook reads the namespace's labels from its cache.
	time.Sleep(2 * time.Second)
}

// warnOrphans turns on orphaned-resource warnings in the AppProject
// default until the test ends. It ignores the RoleBinding pinningNamespace
// makes by hand: a user's would come from Git or the platform's own
// Application.
func warnOrphans(t *testing.T, argo *argoCD) {
	t.Helper()
	projects := argo.apps.ArgoprojV1alpha1().AppProjects(controlplane.ArgoCDNamespace)
	set := func(ctx context.Context, settings *v1alpha1.OrphanedResourcesMonitorSettings) error {
		b, err := json.Marshal(map[string]any{"spec": map[string]any{"orphanedResources": settings}})
		if err != nil {
			return err
		}
		_, err = projects.Patch(ctx, "default", types.MergePatchType, b, metav1.PatchOptions{})
		return err
	}
	warn := true
	settings := &v1alpha1.OrphanedResourcesMonitorSettings{Warn: &warn, Ignore: []v1alpha1.OrphanedResourceKey{
		{Group: rbacv1.GroupName, Kind: "RoleBinding", Name: pinnerRole},
	}}
	if err := set(t.Context(), settings); err != nil {
		t.Fatalf("turning on orphaned-resource warnings: %v", err)
	}
	t.Cleanup(func() {
		if err := set(context.WithoutCancel(t.Context()), nil); err != nil {
			t.Errorf("turning off orphaned-resource warnings: %v", err)
		}
	})
}

// expectPinned checks that the running pods of ReplicaSet rs are pinned and
// read one snapshot of web-config from their environment and volume alike:
// a snapshot sealed to stamp, holding v's greeting, immutable and owned by
// rs. It returns the snapshot's name.
func (g *gitopsApp) expectPinned(t *testing.T, rs, stamp string, v version) string {
	t.Helper()
	ctx := t.Context()
	pods, err := the.kube.CoreV1().Pods(g.ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	snapshot := ""
	n := 0
	for _, p := range pods.Items {
		if c := metav1.GetControllerOf(&p); c == nil || c.Name != rs || p.DeletionTimestamp != nil || p.Status.Phase != corev1.PodRunning {
			continue
		}
		n++
		if got := p.Annotations[pinning.PodAnnotation]; got != "true" {
			t.Fatalf("pod %s of %s: %s=%q, want true", p.Name, rs, pinning.PodAnnotation, got)
		}
		env := p.Spec.Containers[0].Env[0].ValueFrom.ConfigMapKeyRef.Name
		vol := ""
		for _, v := range p.Spec.Volumes {
			if v.Name == "config" && v.ConfigMap != nil {
				vol = v.ConfigMap.Name
			}
		}
		if !strings.HasPrefix(env, "web-config-pin-") || vol != env || (snapshot != "" && env != snapshot) {
			t.Fatalf("pod %s of %s reads env from %s and its volume from %s, want one snapshot of web-config", p.Name, rs, env, vol)
		}
		snapshot = env
	}
	if n == 0 {
		t.Fatalf("no running pod of %s", rs)
	}
	cm, err := the.kube.CoreV1().ConfigMaps(g.ns).Get(ctx, snapshot, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the pods' snapshot: %v", err)
	}
	key, err := pinning.StampLabelKey(stamp)
	if err != nil {
		t.Fatal(err)
	}
	owned := slices.ContainsFunc(cm.OwnerReferences, func(o metav1.OwnerReference) bool { return o.Kind == "ReplicaSet" && o.Name == rs })
	if cm.Data["greeting"] != v.greeting || cm.Immutable == nil || !*cm.Immutable || cm.Labels[pinning.SnapshotLabel] != "true" || cm.Labels[key] == "" || !owned {
		t.Fatalf("snapshot %s: data %v, immutable %v, labels %v, owners %v; want greeting %q, immutable, sealed to the stamp %s and owned by %s",
			snapshot, cm.Data, cm.Immutable, cm.Labels, cm.OwnerReferences, v.greeting, stamp, rs)
	}
	return snapshot
}

// expectRolledBack checks that confighash recorded the undo on the
// Deployment: a halt with reason RolledBack.
func (g *gitopsApp) expectRolledBack(t *testing.T) {
	t.Helper()
	raw := g.mustDeployment(t).Annotations[contract.HaltAnnotation]
	halt, err := contract.ParseHalt(contract.Unsealed(raw))
	if err != nil || halt.Reason != waves.RolledBack {
		t.Fatalf("the Deployment's %s is %q (%v), want reason %s", contract.HaltAnnotation, raw, err, waves.RolledBack)
	}
}

// scaleByHand sets the Deployment's replicas with the real kubectl, as a
// hand edit, waits until self-heal puts Git's 1 back and the Application
// is Synced to sha again, and returns the rollouts once settled.
func (g *gitopsApp) scaleByHand(t *testing.T, replicas int, sha string) rollouts {
	t.Helper()
	patch := fmt.Sprintf(`{"spec":{"replicas":%d}}`, replicas)
	if out, err := g.argo.env.Run(t.Context(), "", "patch", "deployment/web", "-n", g.ns, "--type=merge", "-p", patch); err != nil {
		t.Fatalf("kubectl patch: %v\n%s", err, out)
	}
	var d *appsv1.Deployment
	poll(t, "self-heal to scale web back to 1", 2*time.Minute, func(ctx context.Context) (bool, error) {
		var err error
		d, err = g.deployment(ctx)
		return err == nil && d.Spec.Replicas != nil && *d.Spec.Replicas == 1, nil
	})
	g.waitSynced(t, sha)
	return g.settled(t)
}

// expectNoOrphans checks that the Application manages exactly Git's two
// objects, none of them a snapshot, warns of no orphaned resource, and
// that the snapshots are there, each owned by a ReplicaSet: children in
// Argo CD's tree, not top-level objects.
func (g *gitopsApp) expectNoOrphans(t *testing.T, snapshots ...string) {
	t.Helper()
	app, err := g.get(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var managed []string
	for _, r := range app.Status.Resources {
		managed = append(managed, r.Kind+"/"+r.Name+" "+string(r.Status))
	}
	slices.Sort(managed)
	if want := []string{"ConfigMap/web-config Synced", "Deployment/web Synced"}; !slices.Equal(managed, want) {
		t.Errorf("the Application's resources are %q, want %q", managed, want)
	}
	if c := orphanWarning(app); c != "" {
		t.Errorf("the Application warns: %s", c)
	}
	for _, name := range snapshots {
		cm, err := the.kube.CoreV1().ConfigMaps(g.ns).Get(t.Context(), name, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("snapshot %s: %v", name, err)
		}
		if !slices.ContainsFunc(cm.OwnerReferences, func(o metav1.OwnerReference) bool { return o.Kind == "ReplicaSet" }) {
			t.Errorf("snapshot %s is owned by no ReplicaSet: %v", name, cm.OwnerReferences)
		}
	}
	t.Logf("spec h: the Application manages %q, no orphaned-resource warning; snapshots %q owned by ReplicaSets", managed, snapshots)
}

// expectOrphanWarned is the control: a ConfigMap made by hand, owned by
// nothing, is reported as orphaned, and the warning goes with it.
func (g *gitopsApp) expectOrphanWarned(t *testing.T) {
	t.Helper()
	stray := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "made-by-hand", Namespace: g.ns}, Data: map[string]string{"k": "v"}}
	if _, err := the.kube.CoreV1().ConfigMaps(g.ns).Create(t.Context(), stray, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	warned := g.orphanWarningAfterRefresh(t, true)
	if err := the.kube.CoreV1().ConfigMaps(g.ns).Delete(t.Context(), stray.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	g.orphanWarningAfterRefresh(t, false)
	t.Logf("spec h: control: a ConfigMap made by hand made the Application warn %q; deleted, the warning went", warned)
}

// orphanWarningAfterRefresh refreshes until the Application's orphan
// warning is there (want) or gone, and returns it.
func (g *gitopsApp) orphanWarningAfterRefresh(t *testing.T, want bool) string {
	t.Helper()
	var got string
	deadline := time.Now().Add(time.Minute)
	for {
		g.refresh(t)
		app, err := g.get(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		got = orphanWarning(app)
		if (got != "") == want {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("after a minute of refreshes the orphaned-resource warning is %q, want it there: %v", got, want)
		}
		time.Sleep(time.Second)
	}
}

// orphanWarning is the message of app's OrphanedResourceWarning, if any.
func orphanWarning(app *v1alpha1.Application) string {
	for _, c := range app.Status.Conditions {
		if c.Type == v1alpha1.ApplicationConditionOrphanedResourceWarning {
			return c.Message
		}
	}
	return ""
}
