package certs

import (
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
)

func TestHasAndSetCABundle(t *testing.T) {
	bundle := []byte("-----BEGIN CERTIFICATE-----\nnew\n-----END CERTIFICATE-----\n")
	webhooks := func(bundles ...string) *admissionregistrationv1.MutatingWebhookConfiguration {
		cfg := &admissionregistrationv1.MutatingWebhookConfiguration{}
		for _, b := range bundles {
			var ca []byte
			if b != "" {
				ca = []byte(b)
			}
			cfg.Webhooks = append(cfg.Webhooks, admissionregistrationv1.MutatingWebhook{ClientConfig: admissionregistrationv1.WebhookClientConfig{CABundle: ca}})
		}
		return cfg
	}
	tests := map[string]struct {
		cfg  *admissionregistrationv1.MutatingWebhookConfiguration
		want bool
	}{
		"no webhooks":             {cfg: webhooks(), want: true},
		"all up to date":          {cfg: webhooks(string(bundle), string(bundle)), want: true},
		"one empty":               {cfg: webhooks(string(bundle), ""), want: false},
		"one with an old bundle":  {cfg: webhooks("old", string(bundle)), want: false},
		"single webhook, missing": {cfg: webhooks(""), want: false},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := hasCABundle(tc.cfg, bundle); got != tc.want {
				t.Errorf("hasCABundle = %v, want %v", got, tc.want)
			}
			setCABundle(tc.cfg, bundle)
			if !hasCABundle(tc.cfg, bundle) {
				t.Error("hasCABundle is false after setCABundle")
			}
		})
	}
}
