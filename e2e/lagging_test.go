//go:build e2e

package e2e

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/confighash/confighash/e2e/controlplane"
	"github.com/confighash/confighash/e2e/framework"
)

// cacheLag is how far the lagging replica's ConfigMap informer runs behind:
// well beyond what the specs need between a config write and the template
// write that races it, well within their patience.
const cacheLag = 12 * time.Second

// laggingReplicas runs two replicas in place of env.Confighash: first a
// leader with current caches, which runs the hook, then a replica whose
// ConfigMap watch lags by cacheLag (laggingKubeconfig). The last replica
// started registers its URL, so the apiserver sends every admission to the
// lagging one. laggingArgs are further flags for it.
func laggingReplicas(t *testing.T, laggingArgs ...string) {
	t.Helper()
	stopConfighash(t)
	since := time.Now().Add(-time.Second) // the lease's times are whole seconds
	anotherConfighash(t, "leader", "--leader-elect")
	waitLeader(t, since)
	anotherConfighash(t, "lagging", append([]string{"--kubeconfig=" + laggingKubeconfig(t, "configmaps", cacheLag), "--leader-elect"}, laggingArgs...)...)
}

// anotherConfighash starts a further local replica, stopped when the spec
// ends; its log is shown when the spec fails.
func anotherConfighash(t *testing.T, name string, args ...string) {
	t.Helper()
	r, err := env.AnotherConfighash(name)
	if err != nil {
		t.Skip(err.Error())
	}
	if err := r.Start(env.SpecContext(t), args...); err != nil {
		t.Fatalf("starting confighash %s: %v", name, err)
	}
	t.Cleanup(func() {
		if log := logPathOf(r); log != "" && t.Failed() {
			if text, err := controlplane.TailFile(log, 80); err == nil {
				t.Logf("--- last lines of %s ---\n%s", log, text)
			}
		}
		if err := r.Stop(context.Background()); err != nil {
			t.Errorf("stopping confighash %s: %v", name, err)
		}
	})
}

// waitLeader waits until a replica renewed confighash's lease after since.
func waitLeader(t *testing.T, since time.Time) {
	t.Helper()
	lease := &coordinationv1.Lease{}
	err := wait.PollUntilContextTimeout(env.SpecContext(t), 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		if err := env.Client.Get(ctx, types.NamespacedName{Namespace: framework.Namespace, Name: "confighash.dev"}, lease); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		s := lease.Spec
		return s.HolderIdentity != nil && *s.HolderIdentity != "" && s.RenewTime != nil && !s.RenewTime.Time.Before(since), nil
	})
	if err != nil {
		t.Fatalf("no replica took the lease: %v (lease %+v)", err, lease.Spec)
	}
}

// TestLaggingReplicaStampIsRechecked: a kubectl rollout restart (a change of
// the template's metadata only) answered by a replica whose cache has not
// seen the last config changes gets a stale stamp, here because the template
// reads more changed sources than its live budget
// (--live-reads-per-request=1): the live read goes to a-cfg, sorted first,
// and b-cfg comes from the lagging cache. (A source the cache holds at the
// version a recent LIST found costs no live read, sources.Versions, so both
// must have changed.) The hook re-checks that template change and puts the
// stamp of what the pods read back, so a later revert of b-cfg rolls them.
// Before, only pod-spec changes were re-checked: the stale stamp, which is
// the reverted content's, stayed, and the revert rolled nothing.
func TestLaggingReplicaStampIsRechecked(t *testing.T) {
	ns := env.NewNamespace(t, true)
	acfg := configMap(ns, "a-cfg", map[string]string{"k": "1"})
	env.Create(t, acfg)
	cfg := configMap(ns, "b-cfg", map[string]string{"k": "v1"})
	env.Create(t, cfg)
	spec := podSpec("a-cfg", "unused")
	spec.Containers[0].Env = nil
	spec.Containers[0].EnvFrom = append(spec.Containers[0].EnvFrom, corev1.EnvFromSource{
		ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "b-cfg"}}})
	d := deploymentOf(ns, "app", spec)
	env.Create(t, d)
	waitStamp(t, d, expectedChecksum(t, ns, &spec, nil), 30*time.Second)

	laggingReplicas(t, "--live-reads-per-request=1")
	// One change at a time, each re-stamped by the leader's hook, so that
	// each is one revision.
	env.Update(t, acfg, func() { acfg.Data = map[string]string{"k": "2"} })
	waitStamp(t, d, expectedChecksum(t, ns, &spec, nil), 30*time.Second)
	env.Update(t, cfg, func() { cfg.Data = map[string]string{"k": "v2"} })
	v2 := expectedChecksum(t, ns, &spec, nil)
	waitStamp(t, d, v2, 30*time.Second)

	env.Kubectl(t, "", "-n", ns, "rollout", "restart", "deployment/app")
	// The premise, read before the hook's re-check is due (its coalescing
	// window plus restamp.RecheckDelay, 3 s).
	stale := env.StampOf(t, d)
	if stale == v2 {
		t.Fatalf("premise: the lagging replica stamped the restart with the current content's %q; the spec shows nothing", v2)
	}
	waitStamp(t, d, v2, 30*time.Second)
	// Revisions: the create, the two config changes, the restart, the
	// re-check's re-stamp. Read once the Deployment controller has
	// numbered the last (reading it at once raced that and expected one
	// too few).
	expectRevision(t, ns, "app", 5)
	env.Update(t, cfg, func() { cfg.Data = map[string]string{"k": "v1"} })
	reverted := expectedChecksum(t, ns, &spec, nil)
	if stale != reverted {
		t.Errorf("the lagging replica's stamp %q is not that of a-cfg read live and b-cfg from its cache, %q", stale, reverted)
	}
	waitStamp(t, d, reverted, 30*time.Second)
	expectRevision(t, ns, "app", 6)
}

// TestHelmUpgradeWithLaggingReplicaRollsOnce: a Helm-style upgrade that
// changes a ConfigMap and the Deployment that reads it (its checksum/config
// annotation, as Helm charts do) writes the two back to back, in Helm's
// order (ConfigMaps before Deployments) and as Helm does (strategic merge
// patches). The replica answering the Deployment's admission has not seen
// the ConfigMap write; it reads live when it stamps a template change, so
// the upgrade is exactly one rollout. Before, it stamped the old content
// from its cache, and the hook's re-stamp for the ConfigMap was a second
// rollout. Plain client writes stand in for the Helm SDK, which the module
// does not depend on.
func TestHelmUpgradeWithLaggingReplicaRollsOnce(t *testing.T) {
	ns := env.NewNamespace(t, true)
	cfg := configMap(ns, "cfg", map[string]string{"k": "v1"})
	env.Create(t, cfg)
	spec := podSpec("cfg", "unused")
	spec.Containers[0].Env = nil
	d := deploymentOf(ns, "app", spec)
	d.Spec.Template.Annotations = map[string]string{"checksum/config": sha("v1")}
	env.Create(t, d)
	v1 := expectedChecksum(t, ns, &spec, nil)
	waitStamp(t, d, v1, 30*time.Second)
	expectReplicaSets(t, ns, "app", 1)

	laggingReplicas(t)
	start := time.Now()
	strategicPatch(t, &corev1.ConfigMap{}, ns, "cfg", map[string]any{"data": map[string]any{"k": "v2"}})
	strategicPatch(t, &appsv1.Deployment{}, ns, "app", map[string]any{"spec": map[string]any{"template": map[string]any{
		"metadata": map[string]any{"annotations": map[string]any{"checksum/config": sha("v2")}}}}})
	t.Logf("ConfigMap and Deployment written within %s", time.Since(start).Round(time.Millisecond))
	got, _, err := dryRunStamp(env.SpecContext(t), ns, spec)
	if err != nil {
		t.Fatal(err)
	}
	if got != v1 {
		t.Fatalf("premise: the lagging replica's cache gives %q, want the old content's %q; the spec shows nothing", got, v1)
	}

	v2 := expectedChecksum(t, ns, &spec, nil)
	waitStamp(t, d, v2, 30*time.Second)
	time.Sleep(settle) // room for the hook's re-stamp, had it one to make
	n := len(replicaSetNames(t, ns, "app")) - 1
	t.Logf("Helm-style upgrade (ConfigMap, then Deployment): %d rollout(s)", n)
	if n != 1 {
		t.Fatalf("the upgrade rolled %d times, want 1", n)
	}
	expectReplicaSets(t, ns, "app", 2)
}

func sha(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// strategicPatch writes body to the named object as a strategic merge
// patch, the way Helm applies an upgrade.
func strategicPatch(t *testing.T, obj client.Object, ns, name string, body map[string]any) {
	t.Helper()
	raw, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	obj.SetNamespace(ns)
	obj.SetName(name)
	if err := env.Client.Patch(env.SpecContext(t), obj, client.RawPatch(types.StrategicMergePatchType, raw), client.FieldOwner("helm")); err != nil {
		t.Fatalf("patching %s: %v", name, err)
	}
}
