//go:build e2e

package deploy

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart/loader"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/confighash/confighash/e2e/framework"
	"github.com/confighash/confighash/e2e/images"
	"github.com/confighash/confighash/internal/contract"
)

// A user's chart: a ConfigMap and the Deployment that reads it, as most
// charts are written, with no checksum annotation of their own.
var userChart = map[string]string{
	"Chart.yaml":  "apiVersion: v2\nname: shop\nversion: 0.1.0\n",
	"values.yaml": "greeting: hello\nimage: \"\"\n",
	"templates/config.yaml": `apiVersion: v1
kind: ConfigMap
metadata:
  name: shop-config
data:
  GREETING: {{ .Values.greeting | quote }}
`,
	"templates/deployment.yaml": `apiVersion: apps/v1
kind: Deployment
metadata:
  name: shop
spec:
  replicas: 1
  selector:
    matchLabels: {app: shop}
  template:
    metadata:
      labels: {app: shop}
    spec:
      terminationGracePeriodSeconds: 2
      containers:
      - name: app
        image: {{ .Values.image | quote }}
        args: ["-env", "GREETING"]
        envFrom:
        - configMapRef: {name: shop-config}
`,
}

// userChartUpgrades installs userChart into a labelled namespace with the
// Helm SDK and upgrades it as its users do, on the node, with confighash
// (installed by the caller) serving:
//   - an upgrade with the same values rolls nothing;
//   - an upgrade of the config value and the image together (Helm writes
//     the ConfigMap, then the Deployment) is one rollout, whose pod prints
//     the new value, and no second one follows: the webhook stamped the
//     content written just before the Deployment, so the hook has nothing
//     to correct;
//   - `helm rollback` to the first revision goes back to the first
//     ReplicaSet, whose new pod prints the first value.
func userChartUpgrades(ctx context.Context, t *testing.T, env *framework.NodeEnv, dir string) {
	const ns, release = "shop", "shop"
	chartDir := filepath.Join(dir, "shop")
	for name, text := range userChart {
		path := filepath.Join(chartDir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	chrt, err := loader.Load(chartDir)
	if err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns,
		Labels: map[string]string{contract.InjectionLabel: contract.InjectionEnabled}}}); err != nil {
		t.Fatal(err)
	}
	cfg := new(action.Configuration)
	settings := newHelm(t, env, dir).settings
	settings.SetNamespace(ns)
	if err := cfg.Init(settings.RESTClientGetter(), ns, "secret", t.Logf); err != nil {
		t.Fatalf("initialising Helm for %s: %v", ns, err)
	}
	digest, err := sampleAppDigest(ctx, env)
	if err != nil {
		t.Fatal(err)
	}
	first := map[string]any{"greeting": "hello", "image": images.SampleApp().Ref}
	second := map[string]any{"greeting": "bonjour", "image": digest}

	in := action.NewInstall(cfg)
	in.ReleaseName, in.Namespace, in.Wait, in.Timeout = release, ns, true, 3*time.Minute
	if _, err := in.RunWithContext(ctx, chrt, first); err != nil {
		t.Fatalf("helm install %s: %v", release, err)
	}
	rs1 := env.CurrentReplicaSet(t, ns, "shop")
	expectGreeting(ctx, t, env, ns, rs1, "hello")
	stamp1 := env.StampOf(t, shop(ns))

	upgrade := func(values map[string]any) {
		t.Helper()
		up := action.NewUpgrade(cfg)
		up.Namespace, up.Wait, up.Timeout = ns, true, 3*time.Minute
		if _, err := up.RunWithContext(ctx, release, chrt, values); err != nil {
			t.Fatalf("helm upgrade %s: %v", release, err)
		}
	}
	upgrade(first)
	// Longer than the hook's coalescing window and its work: a rollout the
	// hook started would have made its ReplicaSet by now.
	time.Sleep(5 * time.Second)
	if got, n := env.StampOf(t, shop(ns)), len(env.ReplicaSets(t, ns, "shop")); got != stamp1 || n != 1 {
		t.Fatalf("an upgrade with the same values: stamp %s, %d ReplicaSets; want %s and 1", got, n, stamp1)
	}

	upgrade(second)
	time.Sleep(5 * time.Second)
	rs2 := env.CurrentReplicaSet(t, ns, "shop")
	if n := len(env.ReplicaSets(t, ns, "shop")); rs2 == rs1 || n != 2 {
		t.Fatalf("an upgrade of the config and the image: %d ReplicaSets, current %s; want 2, a new one (one rollout)", n, rs2)
	}
	expectGreeting(ctx, t, env, ns, rs2, "bonjour")

	rb := action.NewRollback(cfg)
	rb.Version, rb.Wait, rb.Timeout = 1, true, 3*time.Minute
	if err := rb.Run(release); err != nil {
		t.Fatalf("helm rollback %s 1: %v", release, err)
	}
	time.Sleep(5 * time.Second)
	if got, n := env.CurrentReplicaSet(t, ns, "shop"), len(env.ReplicaSets(t, ns, "shop")); got != rs1 || n != 2 {
		t.Fatalf("after helm rollback: current %s of %d ReplicaSets; want the first, %s, of 2", got, n, rs1)
	}
	if got := env.StampOf(t, shop(ns)); got != stamp1 {
		t.Fatalf("after helm rollback the stamp is %s, want the first revision's %s", got, stamp1)
	}
	expectGreeting(ctx, t, env, ns, rs1, "hello")
}

func shop(ns string) client.Object {
	return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "shop"}}
}

// sampleAppDigest names the sample app by its digest in the registry: the
// same program the node can run, as a different image reference.
func sampleAppDigest(ctx context.Context, env *framework.NodeEnv) (string, error) {
	idx, err := env.Registry.Index(ctx, images.SampleApp())
	if err != nil {
		return "", err
	}
	d, err := idx.Digest()
	if err != nil {
		return "", err
	}
	return images.Domain + "/sampleapp@" + d.String(), nil
}

// expectGreeting waits until a ready pod of ReplicaSet rs has printed
// GREETING=want.
func expectGreeting(ctx context.Context, t *testing.T, env *framework.NodeEnv, ns, rs, want string) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	var last string
	for time.Now().Before(deadline) {
		var pods corev1.PodList
		if err := env.Client.List(ctx, &pods, client.InNamespace(ns)); err != nil {
			t.Fatal(err)
		}
		for _, p := range pods.Items {
			if len(p.OwnerReferences) == 0 || p.OwnerReferences[0].Name != rs || p.DeletionTimestamp != nil || p.Status.Phase != corev1.PodRunning {
				continue
			}
			out, err := env.Run(ctx, "", "logs", p.Name, "-n", ns)
			if err == nil && strings.Contains(out, "env:GREETING="+want+"\n") {
				return
			}
			last = fmt.Sprintf("%s printed %q (%v)", p.Name, out, err)
		}
		time.Sleep(time.Second)
	}
	t.Fatalf("no running pod of %s printed GREETING=%s: %s", rs, want, last)
}
