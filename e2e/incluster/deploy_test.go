//go:build e2e

package incluster

import (
	"slices"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/confighash/confighash/e2e/framework"
	"github.com/confighash/confighash/e2e/images"
)

// TestDeployedAsUsersDeployIt checks what the shipped overlay produced: two
// replicas of the locally built image, Ready through their own readiness
// probes, one of them holding the leader Lease, and a webhook configuration
// that sends the API server to the Service, not to a URL.
func TestDeployedAsUsersDeployIt(t *testing.T) {
	ctx := env.SpecContext(t)
	pods := confighashPods(t)
	if len(pods) != 2 {
		t.Fatalf("want 2 confighash pods, have %d", len(pods))
	}
	var names []string
	for _, p := range pods {
		names = append(names, p.Name)
		if !ready(p) {
			t.Errorf("pod %s is not Ready", p.Name)
		}
		if img := p.Spec.Containers[0].Image; img != images.Confighash().Ref {
			t.Errorf("pod %s runs %s, want the locally built %s", p.Name, img, images.Confighash().Ref)
		}
		if p.Spec.Containers[0].ReadinessProbe == nil || p.Spec.Containers[0].ReadinessProbe.HTTPGet == nil {
			t.Errorf("pod %s has no HTTP readiness probe: Ready would prove nothing", p.Name)
		}
		if p.Spec.NodeName != "" && p.Status.Phase != corev1.PodRunning {
			t.Errorf("pod %s is %s", p.Name, p.Status.Phase)
		}
	}
	holder, err := leader(ctx)
	if err != nil {
		t.Fatalf("reading the leader Lease: %v", err)
	}
	if !slices.Contains(names, holder) {
		t.Errorf("leader Lease held by %q, not one of the pods %v", holder, names)
	}
	t.Logf("pods %v, leader %s", names, holder)

	mwc := &admissionregistrationv1.MutatingWebhookConfiguration{}
	if err := env.Client.Get(ctx, client.ObjectKey{Name: "confighash"}, mwc); err != nil {
		t.Fatal(err)
	}
	for _, w := range mwc.Webhooks {
		if w.ClientConfig.Service == nil || w.ClientConfig.Service.Namespace != framework.Namespace {
			t.Errorf("webhook %s is not called through the Service: %+v", w.Name, w.ClientConfig)
		}
		if len(w.ClientConfig.CABundle) == 0 {
			t.Errorf("webhook %s has no caBundle: confighash did not inject its CA", w.Name)
		}
	}
	// The Service has both pods as endpoints: that is where the API server
	// sends admission calls.
	out, _ := env.Kubectl(t, "", "get", "endpointslices", "-n", framework.Namespace, "-l", "kubernetes.io/service-name=confighash-webhook",
		"-o", "jsonpath={.items[*].endpoints[*].targetRef.name}")
	for _, n := range names {
		if !strings.Contains(out, n) {
			t.Errorf("pod %s is not an endpoint of the webhook Service (%q)", n, out)
		}
	}
}

// TestStampedThroughTheService creates a Deployment in a labelled namespace:
// the API server calls the in-cluster webhook through its Service, and the
// webhook (in-cluster config, ServiceAccount token, shipped RBAC) reads the
// config and stamps the template.
func TestStampedThroughTheService(t *testing.T) {
	ns := env.NewNamespace(t, true)
	sampleConfig(t, ns, "hello", "hunter2")
	d := sampleApp(ns)
	d.Spec.Replicas = new(int32)
	env.Create(t, d)
	if stamp := env.StampOf(t, d); !strings.Contains(stamp, ":") {
		t.Fatalf("Deployment not stamped through the Service: %q", stamp)
	}
}
