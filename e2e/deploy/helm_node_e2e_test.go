//go:build e2e

package deploy

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/cli"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/confighash/confighash/e2e/framework"
	"github.com/confighash/confighash/e2e/images"
	"github.com/confighash/confighash/internal/contract"
)

// TestHelmChartOnANode installs the chart with the Helm SDK, as `helm
// install` does, onto a local cluster with a real node, with one value
// changed: the image, built from this tree. Both replicas must become Ready
// through their probes, and a Deployment in a labelled namespace must be
// stamped by the webhook the chart deployed.
func TestHelmChartOnANode(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	env, err := framework.SetupNode(ctx, os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if t.Failed() {
			env.DumpNodeLogs(ctx, os.Stderr)
		}
		if err := env.Teardown(); err != nil {
			t.Errorf("tearing down: %v", err)
		}
	}()
	paths, err := FindPaths()
	if err != nil {
		t.Fatal(err)
	}
	settings := cli.New()
	settings.KubeConfig = env.Kubeconfig
	cfg := new(action.Configuration)
	if err := cfg.Init(settings.RESTClientGetter(), framework.Namespace, "secret", t.Logf); err != nil {
		t.Fatalf("initialising Helm: %v", err)
	}
	chrt, err := loader.Load(paths.Chart())
	if err != nil {
		t.Fatal(err)
	}
	repo, tag, _ := strings.Cut(images.Confighash().Ref, ":")
	install := action.NewInstall(cfg)
	install.ReleaseName = ReleaseName
	install.Namespace = framework.Namespace
	install.CreateNamespace = true
	install.Wait = true
	install.Timeout = 3 * time.Minute
	begin := time.Now()
	rel, err := install.Run(chrt, map[string]any{"image": map[string]any{"repository": repo, "tag": tag}})
	if err != nil {
		t.Fatalf("helm install: %v", err)
	}
	t.Logf("release %s %s in %s", rel.Name, rel.Info.Status, time.Since(begin).Round(time.Millisecond))
	if err := env.WaitRollout(ctx, framework.Namespace, "confighash", 3*time.Minute); err != nil {
		t.Fatal(err)
	}

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
}
