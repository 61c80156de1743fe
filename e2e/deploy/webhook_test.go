package deploy

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/utils/ptr"

	"github.com/confighash/confighash/internal/injection"
	"github.com/confighash/confighash/webhook"
)

// TestWebhookConfigurationMatchesCode is the guard that the manifests match
// the code: the rendered MutatingWebhookConfiguration must be exactly what
// webhook.Configuration builds (which out-of-cluster mode applies as is),
// with the Service of the manifests as its client. Only the cert-manager
// annotation and the chart's own labels may differ.
func TestWebhookConfigurationMatchesCode(t *testing.T) {
	for _, r := range decodedRenders(t) {
		t.Run(r.Name, func(t *testing.T) {
			// The kinds follow the Deployment's --workload-kind flags, as
			// the rules the binary applies itself in out-of-cluster mode.
			kinds := kindsOf(t, r)
			want := webhook.Configuration(r.MWC.Name, injection.New(Namespace), kinds, admissionregistrationv1.WebhookClientConfig{
				Service: &admissionregistrationv1.ServiceReference{
					Namespace: r.Service.Namespace,
					Name:      r.Service.Name,
					Path:      ptr.To(webhook.Path),
					Port:      ptr.To(r.Service.Spec.Ports[0].Port),
				},
			})
			// Namespaced mode: the selector is the policy of the
			// Deployment's --namespaces, as out-of-cluster mode applies it.
			policy := injection.New(Namespace, NamespacesArg(r.Container.Args)...)
			want.Webhooks[0].NamespaceSelector = policy.NamespaceSelector()
			// Pinning: the pod webhook follows, as out-of-cluster mode
			// appends it.
			if slices.Contains(r.Container.Args, "--pinning") {
				cc := want.Webhooks[0].ClientConfig.DeepCopy()
				cc.Service.Path = ptr.To(webhook.PinPath)
				want.Webhooks = append(want.Webhooks, webhook.PinWebhook(policy, *cc))
			}
			// The webhook listens on the port named in the Service, and the
			// Service's port is 443 in the code's configuration too.
			if want.Webhooks[0].ClientConfig.Service.Port == nil || *want.Webhooks[0].ClientConfig.Service.Port != 443 {
				t.Errorf("Service port %d, want 443", r.Service.Spec.Ports[0].Port)
			}
			got := r.MWC.DeepCopy()
			for _, l := range HelmOnlyLabels {
				delete(got.Labels, l)
			}
			wantAnnotations := map[string]string(nil)
			if r.Mode.Flag == "external" {
				wantAnnotations = map[string]string{"cert-manager.io/inject-ca-from": Namespace + "/confighash-webhook"}
			}
			if diff := cmp.Diff(wantAnnotations, got.Annotations); diff != "" {
				t.Errorf("annotations (-want +got):\n%s", diff)
			}
			got.Annotations = nil
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("MutatingWebhookConfiguration differs from webhook.Configuration (-code +manifests):\n%s", diff)
			}
			for i, w := range r.MWC.Webhooks {
				if len(w.ClientConfig.CABundle) > 0 {
					t.Errorf("webhook %d has a caBundle: it is injected at run time, and a fixed one would be overwritten or go stale", i)
				}
			}
		})
	}
}
