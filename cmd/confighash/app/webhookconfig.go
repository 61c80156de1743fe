package app

import (
	"context"
	"fmt"
	"strconv"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/confighash/confighash/internal/contract"
	"github.com/confighash/confighash/internal/workload"
	"github.com/confighash/confighash/webhook"
)

// fieldOwner is confighash's field manager for every write it makes.
const fieldOwner = contract.FieldManager

// applyWebhookConfiguration registers the webhook by URL for out-of-cluster
// mode. Server-side apply leaves caBundle alone, since the certificate
// manager writes that field under its own operation.
func applyWebhookConfiguration(ctx context.Context, c client.Client, o Options, kinds workload.Registry, ep *webhookEndpoint) error {
	url := "https://" + hostPort(ep) + webhook.Path
	cfg := webhook.Configuration(o.WebhookConfigName, o.policy(), kinds, admissionregistrationv1.WebhookClientConfig{URL: &url})
	if o.Pinning {
		pin := "https://" + hostPort(ep) + webhook.PinPath
		cfg.Webhooks = append(cfg.Webhooks, webhook.PinWebhook(o.policy(), admissionregistrationv1.WebhookClientConfig{URL: &pin}))
	}
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(cfg)
	if err != nil {
		return fmt.Errorf("converting webhook configuration: %w", err)
	}
	// The typed object marshals an empty creationTimestamp, which apply
	// would try to own.
	delete(u["metadata"].(map[string]any), "creationTimestamp")
	ac := client.ApplyConfigurationFromUnstructured(&unstructured.Unstructured{Object: u})
	if err := c.Apply(ctx, ac, client.FieldOwner(fieldOwner), client.ForceOwnership); err != nil {
		return fmt.Errorf("applying mutatingwebhookconfiguration %s: %w", o.WebhookConfigName, err)
	}
	return nil
}

func hostPort(ep *webhookEndpoint) string {
	if ep.ip != nil && ep.ip.To4() == nil {
		return "[" + ep.host + "]:" + strconv.Itoa(ep.port)
	}
	return ep.host + ":" + strconv.Itoa(ep.port)
}

// ensureNamespace creates confighash's namespace in out-of-cluster mode,
// where no manifest has made it.
func ensureNamespace(ctx context.Context, c client.Client, name string) error {
	err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating namespace %s: %w", name, err)
	}
	return nil
}
