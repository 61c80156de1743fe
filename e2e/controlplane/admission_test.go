//go:build linux

package controlplane

import (
	"os"
	"strings"
	"testing"

	"k8s.io/client-go/tools/clientcmd"
)

// TestWebhookClientCertIsAClientOfTheCA: the pair the API server presents
// to webhooks verifies as a client certificate of the cluster CA, under its
// own name, and carries no group (it is not an identity for the API).
func TestWebhookClientCertIsAClientOfTheCA(t *testing.T) {
	p := testPKI(t)
	c := clientCertOf(t, p, p.WebhookClientCert)
	if c.Subject.CommonName != WebhookClientName || len(c.Subject.Organization) != 0 {
		t.Errorf("subject = %v, want CN=%s and no organization", c.Subject, WebhookClientName)
	}
}

// TestAdmissionConfigNamesTheWebhookClientPair: both webhook plugins read
// a kubeconfig whose "*" user (any webhook host) is the webhook client pair.
func TestAdmissionConfigNamesTheWebhookClientPair(t *testing.T) {
	dir, files := writtenPKI(t)
	out, err := writeAdmissionConfig(dir, files)
	if err != nil {
		t.Fatal(err)
	}
	config, err := os.ReadFile(out.Config)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"kind: AdmissionConfiguration", "- name: MutatingAdmissionWebhook", "- name: ValidatingAdmissionWebhook",
		"kind: WebhookAdmissionConfiguration", "kubeConfigFile: \"" + out.Kubeconfig + "\""} {
		if !strings.Contains(string(config), want) {
			t.Errorf("admission configuration lacks %q:\n%s", want, config)
		}
	}
	kc, err := clientcmd.LoadFromFile(out.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	u := kc.AuthInfos["*"]
	if u == nil || u.ClientCertificate != files.WebhookClientCert || u.ClientKey != files.WebhookClientKey {
		t.Errorf("kubeconfig user * = %+v, want the webhook client pair %s, %s", u, files.WebhookClientCert, files.WebhookClientKey)
	}
}
