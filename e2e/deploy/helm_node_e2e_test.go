//go:build e2e

package deploy

import (
	"context"
	"strings"
	"testing"
	"time"

	"helm.sh/helm/v3/pkg/action"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/confighash/confighash/e2e/framework"
	"github.com/confighash/confighash/e2e/images"
	"github.com/confighash/confighash/internal/contract"
)

// TestHelmChartOnANode installs the chart as a user does, from an OCI
// registry: it is packaged (`helm package`), pushed to the local registry
// that SetupNode serves (`helm push`) and installed from its oci://
// reference with the Helm SDK (`helm install oci://…`), onto a local
// cluster with a real node, with one value changed: the image, built from
// this tree, which the node pulls from the same registry. Both replicas must
// become Ready through their probes, having pulled their image, and a
// Deployment in a labelled namespace must be stamped by the webhook the
// chart deployed. Then a user's chart is upgraded and rolled back over it
// (userChartUpgrades).
func TestHelmChartOnANode(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	env := startNode(ctx, t)
	paths, err := FindPaths()
	if err != nil {
		t.Fatal(err)
	}
	helmDir := t.TempDir()
	regClient, err := NewOCIRegistryClient(helmDir)
	if err != nil {
		t.Fatal(err)
	}
	published, err := PublishChart(paths.Chart(), helmDir, env.Registry.Host(), regClient)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("pushed %s:%s (%d bytes packaged)", published.Ref, published.Version, published.Bytes)

	h := newHelm(t, env, helmDir)
	h.cfg.RegistryClient = regClient
	install := action.NewInstall(h.cfg)
	install.SetRegistryClient(regClient)
	chrt, err := published.Pull(install, h.settings)
	if err != nil {
		t.Fatal(err)
	}
	repo, tag, _ := strings.Cut(images.Confighash().Ref, ":")
	install.ReleaseName = ReleaseName
	install.Namespace = framework.Namespace
	install.CreateNamespace = true
	install.Wait = true
	install.Timeout = 3 * time.Minute
	begin := time.Now()
	rel, err := install.Run(chrt, map[string]any{"image": map[string]any{"repository": repo, "tag": tag}})
	if err != nil {
		t.Fatalf("helm install %s: %v", published.Ref, err)
	}
	t.Logf("release %s %s (chart %s-%s) in %s", rel.Name, rel.Info.Status, rel.Chart.Metadata.Name, rel.Chart.Metadata.Version, time.Since(begin).Round(time.Millisecond))
	if err := env.WaitRollout(ctx, framework.Namespace, "confighash", 3*time.Minute); err != nil {
		t.Fatal(err)
	}
	checkPulled(ctx, t, env, images.Confighash().Ref)

	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "helm-e2e",
		Labels: map[string]string{contract.InjectionLabel: contract.InjectionEnabled}}}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: "cfg"}, Data: map[string]string{"k": "v"}}
	labels := map[string]string{"app": "reader"}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: "reader"},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](0),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{
				Containers: []corev1.Container{{Name: "app", Image: images.SampleApp().Ref,
					EnvFrom: []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "cfg"}}}}}},
			}},
		},
	}
	for _, obj := range []client.Object{ns, cm, d} {
		if err := env.Client.Create(ctx, obj); err != nil {
			t.Fatalf("creating %s: %v", obj.GetName(), err)
		}
	}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(d), d); err != nil {
		t.Fatal(err)
	}
	if stamp := d.Spec.Template.Annotations[contract.ChecksumAnnotation]; !strings.Contains(stamp, ":") {
		t.Fatalf("the chart's webhook did not stamp the Deployment: %q", stamp)
	}
	t.Run("a user's chart, upgraded and rolled back", func(t *testing.T) { userChartUpgrades(ctx, t, env, helmDir) })
}

// checkPulled fails unless the kubelet pulled ref for the pods in confighash's
// namespace (rather than finding it already on the node), and logs how long
// each pull took, as the kubelet reports it.
func checkPulled(ctx context.Context, t *testing.T, env *framework.NodeEnv, ref string) {
	t.Helper()
	var events corev1.EventList
	if err := env.Client.List(ctx, &events, client.InNamespace(framework.Namespace)); err != nil {
		t.Fatal(err)
	}
	pulled := 0
	for _, ev := range events.Items {
		if ev.Reason == "Pulled" && strings.Contains(ev.Message, ref) {
			t.Logf("%s: %s", ev.InvolvedObject.Name, ev.Message)
			if strings.HasPrefix(ev.Message, "Successfully pulled") {
				pulled++
			}
		}
	}
	if pulled == 0 {
		t.Errorf("no pod pulled %s from the registry", ref)
	}
}
