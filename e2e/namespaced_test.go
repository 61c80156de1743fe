//go:build e2e

package e2e

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/confighash/confighash/cmd/confighash/app"
	"github.com/confighash/confighash/internal/contract"
	"github.com/confighash/confighash/internal/workload"
)

// TestNamespacedMode runs confighash with --namespaces=ALLOWED and a token
// that may read only there (plus its own namespace and the cluster-scoped
// requests of the code's table: namespaces, its webhook configuration), as
// a team without cluster-wide Secret read would deploy it. A Deployment in
// ALLOWED is stamped on create and re-stamped when its ConfigMap changes;
// one in another labelled namespace is left alone, by the apiserver (the
// configuration's selector) and by the webhook itself (a review POSTed to
// it directly); a change in ALLOWED goes in waves; and confighash's log has
// no "forbidden": its caches, watches and the waves' reads never reach
// beyond ALLOWED.
func TestNamespacedMode(t *testing.T) {
	logPath := logPathOf(env.Confighash)
	if logPath == "" {
		t.Skip("needs the local confighash: the spec starts it with its own token and reads its log")
	}
	stopConfighash(t)
	allowed, other := env.NewNamespace(t, true), env.NewNamespace(t, true)

	o := app.DefaultOptions()
	// What the local runner passes: out-of-cluster mode, no metrics.
	o.WebhookURL, o.MetricsAddr = env.Confighash.WebhookURL(), "0"
	o.Namespaces = []string{allowed}
	kubeconfig := scopedKubeconfig(t, app.Permissions(o, workload.Kinds()))
	expectScopedToken(t, kubeconfig, allowed, other)

	logStart := fileSize(t, logPath)
	// Waves on, as by default (the harness turns them off): their judge
	// reads pods and writes Events, and must stay in ALLOWED too.
	if err := env.Confighash.Start(env.SpecContext(t), "--kubeconfig="+kubeconfig, "--namespaces="+allowed, "--max-wave-size=4", "--rollout-soak=0s"); err != nil {
		t.Fatalf("starting confighash in namespaced mode: %v", err)
	}
	t.Cleanup(func() { _ = env.Confighash.Stop(context.Background()) })

	apps := map[string]*appsv1.Deployment{}
	for _, ns := range []string{allowed, other} {
		env.Create(t, configMap(ns, "cfg", map[string]string{"a": "1"}))
		env.Create(t, secret(ns, "sec", map[string]string{"password": "hunter2"}))
		apps[ns] = deploymentOf(ns, "app", podSpec("cfg", "sec"))
		env.Create(t, apps[ns])
	}

	// ALLOWED: stamped by the webhook, re-stamped by the hook.
	d := apps[allowed]
	first := env.StampOf(t, d)
	if want := expectedChecksum(t, allowed, &d.Spec.Template.Spec, d.Annotations); first != want {
		t.Fatalf("%s: stamp %q on create, want %q", allowed, first, want)
	}
	cm := &corev1.ConfigMap{}
	cm.Namespace, cm.Name = allowed, "cfg"
	env.Update(t, cm, func() { cm.Data = map[string]string{"a": "2"} })
	want := expectedChecksum(t, allowed, &d.Spec.Template.Spec, d.Annotations)
	waitStamp(t, d, want, 30*time.Second)
	if want == first {
		t.Fatal("the config change did not change the expected stamp; the spec shows nothing")
	}

	// ALLOWED, in waves: the canary DaemonSet (its rollout ends once its
	// controller observes it: no node) and then the other.
	shared := configMap(allowed, "shared", map[string]string{"v": "1"})
	env.Create(t, shared)
	canary, next := waveDaemonSet(allowed, "canary"), waveDaemonSet(allowed, "next")
	canary.Annotations = map[string]string{contract.RolloutOrderAnnotation: "-1"}
	env.Create(t, canary)
	env.Create(t, next)
	env.Update(t, shared, func() { shared.Data["v"] = "2" })
	for _, ds := range []*appsv1.DaemonSet{canary, next} {
		waitStamp(t, ds, expectedChecksum(t, allowed, &ds.Spec.Template.Spec, nil), 30*time.Second)
		if rec, err := contract.ParseRollout(ds.Annotations[contract.RolloutAnnotation]); err != nil || len(rec.Changes) != 1 {
			t.Errorf("%s: rollout record %q: %v", ds.Name, ds.Annotations[contract.RolloutAnnotation], err)
		}
	}

	// OTHER: left alone on create, on a config change, and by the webhook
	// when asked directly.
	ocm := &corev1.ConfigMap{}
	ocm.Namespace, ocm.Name = other, "cfg"
	env.Update(t, ocm, func() { ocm.Data = map[string]string{"a": "2"} })
	time.Sleep(settle)
	if s := env.StampOf(t, apps[other]); s != "" {
		t.Errorf("%s (labelled, not in --namespaces): stamped %q", other, s)
	}
	resp := postReview(t, webhookHTTPClient(t), env.Confighash.WebhookURL(), other, podSpec("cfg", "sec"))
	if !resp.Allowed || resp.Patch != nil || len(resp.Warnings) > 0 {
		t.Errorf("%s: the webhook answered allowed=%v patch=%s warnings=%q; want allowed, nothing else", other, resp.Allowed, resp.Patch, resp.Warnings)
	}
	if resp := postReview(t, webhookHTTPClient(t), env.Confighash.WebhookURL(), allowed, podSpec("cfg", "sec")); resp.Patch == nil {
		t.Errorf("%s: a review POSTed directly got no patch; the check above shows nothing", allowed)
	}

	log := readFrom(t, logPath, logStart)
	if strings.Contains(strings.ToLower(log), "forbidden") {
		t.Errorf("confighash was denied something:\n%s", grepLines(log, "forbidden"))
	}
	if !strings.Contains(log, "starting") {
		t.Errorf("the log segment read is not this run's:\n%s", log)
	}
}

// expectScopedToken makes sure the token is what the spec claims: it may
// read Secrets in allowed and not in other, nor list them cluster-wide.
func expectScopedToken(t *testing.T, kubeconfig, allowed, other string) {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := env.SpecContext(t)
	if err := c.List(ctx, &corev1.SecretList{}, client.InNamespace(allowed)); err != nil {
		t.Errorf("the token cannot list Secrets in %s: %v", allowed, err)
	}
	for _, opts := range [][]client.ListOption{{client.InNamespace(other)}, nil} {
		if err := c.List(ctx, &corev1.SecretList{}, opts...); !apierrors.IsForbidden(err) {
			t.Errorf("the token lists Secrets %v: %v; want forbidden", opts, err)
		}
	}
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

// readFrom reads path from offset on: one run's part of the runner's log,
// which every start appends to.
func readFrom(t *testing.T, path string, offset int64) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b[min(offset, int64(len(b))):])
}

func grepLines(text, word string) string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(strings.ToLower(l), word) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
